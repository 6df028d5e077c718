#!/usr/bin/env python3
# Checks benchtrap's GitHub Actions (action.yml, comment/action.yml) and the
# workflows of docs/ci.md: they parse, have the keys GitHub and GitLab
# require, use no action on a major that runs on the deprecated Node.js 20,
# give write permission only to a job that runs none of the pull request's
# code, and every shell step is valid bash. Prints one line per finding and
# exits 1 if any; writes each shell step to OUTDIR for bash -n.
# usage: ci_workflows.py SOURCE_ROOT OUTDIR
import os
import re
import subprocess
import sys

import yaml

root, outdir = sys.argv[1], sys.argv[2]
problems = []

# The first major of each that runs on Node.js 24 (their release notes).
FIRST_NODE24 = {"actions/checkout": 5, "actions/cache": 5, "actions/upload-artifact": 6,
                "actions/download-artifact": 7}


def problem(msg):
    problems.append(msg)


# The commits of the releases pinned, each read from the action's own
# repository (git show-ref --tags of a clone): a pin must say which release
# it is, and a known commit must be the release it says.
RELEASES = {
    "27d5ce7f107fe9357f9df03efb73ab90386fccae": ("actions/cache", "v5.0.5"),
    "b7c566a772e6b6bfb58ed0dc250532a479d7789f": ("actions/upload-artifact", "v6.0.0"),
    "37930b1c2abaa49bbe596cd826c3c89aef350131": ("actions/download-artifact", "v7.0.0"),
    "d23441a48e516b6c34aea4fa41551a30e30af803": ("actions/checkout", "v6.1.0"),
}
# uses -> the versions in the comments of its lines, in the order of the
# text, from every file's text (YAML drops comments); each check takes the
# next.
COMMENTS = {}


def read_comments(text):
    for m in re.finditer(r"uses:\s*(\S+)[ \t]*(?:#[ \t]*(\S+))?", text):
        COMMENTS.setdefault(m.group(1), []).append(m.group(2))


def check_uses(where, uses):
    name, _, ref = uses.partition("@")
    # actions/cache/restore is a part of actions/cache, at its commits.
    repo = "/".join(name.split("/")[:2])
    if not ref:
        problem("%s: %s is not pinned to a ref" % (where, uses))
        return
    if re.fullmatch(r"[0-9a-f]{40}", ref):
        version = (COMMENTS.get(uses) or [None]).pop(0)
        if not version or not re.fullmatch(r"v\d+(\.\d+)*", version):
            problem("%s: %s: a commit needs its release in a comment, '# vN.N.N'" % (where, uses))
            return
        if ref in RELEASES and RELEASES[ref] != (repo, version):
            problem("%s: %s is %s %s, not %s" % (where, uses, RELEASES[ref][0], RELEASES[ref][1],
                                                 version))
        ref = version
    elif name.startswith("actions/"):
        problem("%s: %s: a tag can be moved; pin the commit, '@SHA # vN.N.N'" % (where, uses))
    if repo in FIRST_NODE24:
        m = re.fullmatch(r"v(\d+)(\.\d+)*", ref)
        if not m:
            problem("%s: %s: pin a commit of v%d or later" % (where, uses, FIRST_NODE24[repo]))
        elif int(m.group(1)) < FIRST_NODE24[repo]:
            problem("%s: %s runs on the deprecated Node.js 20: use v%d or later"
                    % (where, uses, FIRST_NODE24[repo]))


nscripts = 0


def shell_step(where, script):
    """Writes a step's script for bash -n, expressions replaced by a word."""
    global nscripts
    nscripts += 1
    text = re.sub(r"\$\{\{.*?\}\}", "EXPR", script)
    path = os.path.join(outdir, "step-%02d.sh" % nscripts)
    with open(path, "w") as f:
        f.write("# %s\n%s\n" % (where, text))
    r = subprocess.run(["bash", "-n", path], capture_output=True, text=True)
    if r.returncode:
        problem("%s: not valid bash: %s" % (where, r.stderr.strip()))


def check_action(rel):
    path = os.path.join(root, rel)
    with open(path) as f:
        text = f.read()
    read_comments(text)
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        problem("%s: not YAML: %s" % (rel, str(e).replace("\n", " ")))
        return None
    for key in ("name", "description", "runs"):
        if key not in doc:
            problem("%s: no '%s'" % (rel, key))
    runs = doc.get("runs", {})
    if runs.get("using") != "composite":
        problem("%s: runs.using is not composite" % rel)
    inputs = doc.get("inputs", {}) or {}
    for name, spec in inputs.items():
        if "description" not in (spec or {}):
            problem("%s: input %s has no description" % (rel, name))
    for used in set(re.findall(r"inputs\.([A-Za-z0-9_-]+)", text)):
        if used not in inputs:
            problem("%s: inputs.%s is used but not declared" % (rel, used))
    ids = set()
    for i, step in enumerate(runs.get("steps", [])):
        where = "%s: step %d (%s)" % (rel, i + 1, step.get("name", step.get("uses", "")))
        if "id" in step:
            ids.add(step["id"])
        # Empty inside a composite action (the runner fills them for the
        # workflow's own steps only): a URL made of them names no repository.
        if re.search(r"github\.action_(repository|ref)\b|GITHUB_ACTION_(REPOSITORY|REF)\b",
                     str({k: v for k, v in step.items() if k != "name"})):
            problem("%s: github.action_repository and action_ref are empty in a composite action"
                    % where)
        if "uses" in step:
            check_uses(where, step["uses"])
        elif "run" in step:
            if "shell" not in step:
                problem("%s: a run step of a composite action needs 'shell'" % where)
            shell_step(where, step["run"])
            # Inputs go through env, never into the script's text, where
            # a value would be shell code.
            if re.search(r"\$\{\{\s*inputs\.", step["run"]):
                problem("%s: an input expanded inside the script: pass it in env" % where)
        else:
            problem("%s: neither uses nor run" % where)
    for name, spec in (doc.get("outputs") or {}).items():
        for sid in re.findall(r"steps\.([A-Za-z0-9_-]+)\.outputs", str(spec.get("value", ""))):
            if sid not in ids:
                problem("%s: output %s names step %s, which does not exist" % (rel, name, sid))
    return doc


def writes(perms):
    if perms in ("write-all",):
        return True
    if isinstance(perms, dict):
        return any(v == "write" for v in perms.values())
    return False


def check_github(wf):
    where = "docs/ci.md (GitHub Actions)"
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads the key 'on' as true
    if not on or "jobs" not in wf:
        problem("%s: needs 'on' and 'jobs'" % where)
        return
    if writes(wf.get("permissions")):
        problem("%s: the workflow's permissions grant write to every job" % where)
    if "permissions" not in wf:
        problem("%s: no workflow permissions: the default may be write" % where)
    writers = 0
    for jname, job in wf["jobs"].items():
        jw = "%s: job %s" % (where, jname)
        for key in ("runs-on", "steps"):
            if key not in job:
                problem("%s: no '%s'" % (jw, key))
        if "permissions" not in job:
            problem("%s: no permissions of its own" % jw)
        for need in ([job["needs"]] if isinstance(job.get("needs"), str) else job.get("needs", [])):
            if need not in wf["jobs"]:
                problem("%s: needs %s, which is not a job" % (jw, need))
        runs_pr_code = False
        for i, step in enumerate(job.get("steps", [])):
            sw = "%s: step %d" % (jw, i + 1)
            uses = step.get("uses", "")
            if uses:
                check_uses(sw, uses)
            if "run" in step:
                shell_step(sw, step["run"])
                runs_pr_code = True  # a script in a job may run anything checked out
            if uses.startswith("actions/checkout@"):
                runs_pr_code = True
            w = step.get("with", {}) or {}
            if "build" in w or "binary" in w:
                runs_pr_code = True
        if writes(job.get("permissions")):
            writers += 1
            if runs_pr_code:
                problem("%s: has write permission and checks out or runs the pull request's code"
                        % jw)
            if not any("/comment@" in s.get("uses", "") for s in job.get("steps", [])):
                problem("%s: has write permission but does not post the comment" % jw)
            # A fork's pull request gets a read-only token: the job would
            # fail on every one of them.
            cond = re.sub(r"\s+", " ", str(job.get("if", "")))
            if "github.event.pull_request.head.repo.full_name == github.repository" not in cond:
                problem("%s: has write permission but runs on forks' pull requests, whose token "
                        "is read-only: skip it there" % jw)
    if writers != 1:
        problem("%s: %d jobs may write; the comment job alone should" % (where, writers))


def check_gitlab(wf):
    where = "docs/ci.md (GitLab CI)"
    for jname, job in wf.items():
        if "script" not in job:
            problem("%s: job %s has no script" % (where, jname))
            continue
        shell_step("%s: job %s" % (where, jname), "\n".join(job["script"]))


check_action("action.yml")
check_action("comment/action.yml")
with open(os.path.join(root, "docs/ci.md")) as f:
    md = f.read()
read_comments(md)
blocks = []
for b in re.findall(r"```yaml\n(.*?)```", md, re.S):
    try:
        blocks.append(yaml.safe_load(b))
    except yaml.YAMLError as e:
        problem("docs/ci.md: a yaml block is not YAML: %s" % str(e).replace("\n", " "))
gh = [b for b in blocks if isinstance(b, dict) and "jobs" in b]
# The pipeline of a pull request, beside others (a history job) that are
# YAML too.
gl = [b for b in blocks if isinstance(b, dict) and "jobs" not in b and "benchmarks" in b]
if len(gh) != 1 or len(gl) != 1:
    problem("docs/ci.md: expected one GitHub workflow and one GitLab pipeline, found %d and %d"
            % (len(gh), len(gl)))
else:
    check_github(gh[0])
    check_gitlab(gl[0])
if any("--edit-last" in b for b in re.findall(r"```yaml\n(.*?)```", md, re.S)):
    problem("docs/ci.md: gh pr comment --edit-last edits whichever comment was last")
for m in re.finditer(r"git clone[^\n`]*", md):
    if "--branch" not in m.group(0):
        problem("docs/ci.md: '%s' clones benchtrap unpinned" % m.group(0))
for p in problems:
    print(p)
print("checked 2 actions, 2 workflows, %d shell steps: %d problem(s)" % (nscripts, len(problems)))
sys.exit(1 if problems else 0)
