#!/usr/bin/env python3
"""Secret examples from the test data of established secret scanners, for the recall half of
the secrets benchmark. Only their data is used (each case's text, its rule id, and whether
their test expects a finding); no scanner code is copied or run.

Each source is a git snapshot of a public repository (a mirror, bare clone or checkout: pass
its git dir, or let the defaults under /work/.mirror/ be found). Nothing fetched goes into
this repository: the cases go to --out (JSONL), and a manifest beside it records the repo,
commit and path of every file read.

  gitleaks/gitleaks            cmd/generate/config/rules/*.go: the literal strings of each
                               rule's `tps` (true positives) and `fps` (false positives)
  trufflesecurity/trufflehog   pkg/detectors/<name>/*_test.go: each pattern test's `input`
                               and `want` (the secrets the detector must report)
  Yelp/detect-secrets          tests/plugins/*_test.py: `pytest.mark.parametrize` cases
  praetorian-inc/noseyparker   crates/noseyparker/data/default/builtin/rules/*.yml: each
                               rule's `examples` and `negative_examples`

and, added later as a second held-out set (`"set": "new"`; the four above are `"old"`):

  secretlint/secretlint        packages/@secretlint/secretlint-rule-*/test/snapshots/*/:
                               each `output.json` message (its rule, message id and the
                               range it reports) as a positive, the lines holding it as the
                               text; a snapshot with no message as a negative
  sirwart/ripsecrets           test/one_per_line/*: each line a positive; test/one_per_file/*:
                               each file a positive; test/none: each line a negative

Their rule ids are mapped to the kinds pidx claims (KINDS below); a case of a rule that maps
to no pidx kind is left out. Each case gets a half (`tune` or `report`) from a hash of its
source, path and text.

usage: fetch.py --out cases.jsonl [--gitleaks GITDIR] [--trufflehog GITDIR] [--detect-secrets GITDIR]
                [--noseyparker GITDIR] [--secretlint GITDIR] [--ripsecrets GITDIR]
"""

import argparse
import ast
import hashlib
import json
import os
import re
import subprocess
import sys

MIRROR = "/work/.mirror"

# gitleaks rule id -> pidx kind
GITLEAKS = {
    "private-key": "private-key",
    "aws-access-token": "aws-access-key",
    "github-pat": "github-token", "github-fine-grained-pat": "github-token",
    "github-oauth": "github-token", "github-app-token": "github-token",
    "github-refresh-token": "github-token",
    "gitlab-pat": "gitlab-token", "gitlab-pat-routable": "gitlab-token",
    "gitlab-ptt": "gitlab-token", "gitlab-rrt": "gitlab-token",
    "gitlab-deploy-token": "gitlab-token", "gitlab-cicd-job-token": "gitlab-token",
    "gitlab-runner-authentication-token": "gitlab-token",
    "gitlab-runner-authentication-token-routable": "gitlab-token",
    "gitlab-feed-token": "gitlab-token", "gitlab-incoming-mail-token": "gitlab-token",
    "gitlab-kubernetes-agent-token": "gitlab-token", "gitlab-oauth-app-secret": "gitlab-token",
    "gitlab-scim-token": "gitlab-token", "gitlab-feature-flag-client-token": "gitlab-token",
    "slack-bot-token": "slack-token", "slack-user-token": "slack-token",
    "slack-app-token": "slack-token", "slack-config-access-token": "slack-token",
    "slack-config-refresh-token": "slack-token", "slack-legacy-bot-token": "slack-token",
    "slack-legacy-workspace-token": "slack-token", "slack-legacy-token": "slack-token",
    "slack-webhook-url": "slack-webhook",
    "stripe-access-token": "stripe-key",
    "anthropic-api-key": "anthropic-key", "anthropic-admin-api-key": "anthropic-key",
    "openai-api-key": "openai-key",
    "gcp-api-key": "google-api-key",
    "huggingface-access-token": "huggingface-token",
    "huggingface-organization-api-token": "huggingface-token",
    "npm-access-token": "npm-token",
    "jwt": "jwt",
    "curl-auth-header": "auth-header",
    "generic-api-key": "keyword-generic",
}

# trufflehog detector folder -> pidx kind
TRUFFLEHOG = {
    "aws/access_keys": "aws-access-key",
    "github/v1": "github-token", "github/v2": "github-token",
    "gitlab/v1": "gitlab-token", "gitlab/v2": "gitlab-token", "gitlab/v3": "gitlab-token",
    "slack": "slack-token", "slackwebhook": "slack-webhook",
    "stripe": "stripe-key", "anthropic": "anthropic-key", "openai": "openai-key",
    "huggingface": "huggingface-token", "npmtokenv2": "npm-token", "jwt": "jwt",
    "privatekey": "private-key", "googlegemini": "google-api-key",
    "uri": "url-password", "ftp": "url-password", "mongodb": "url-password",
    "postgres": "url-password", "redis": "url-password",
    "jdbc": "conn-password", "sqlserver": "conn-password",
}

# Nosey Parker rule id -> pidx kind
NOSEYPARKER = {
    "np.aws.1": "aws-access-key", "np.aws.2": "aws-secret-key", "np.aws.6": "aws-secret-key",
    "np.anthropic.1": "anthropic-key",
    "np.github.1": "github-token", "np.github.2": "github-token", "np.github.3": "github-token",
    "np.github.4": "github-token", "np.github.7": "github-token",
    "np.gitlab.1": "gitlab-token", "np.gitlab.2": "gitlab-token", "np.gitlab.3": "gitlab-token",
    "np.google.5": "google-api-key", "np.huggingface.1": "huggingface-token", "np.jwt.1": "jwt",
    "np.npm.1": "npm-token", "np.openai.1": "openai-key", "np.pem.1": "private-key",
    "np.slack.2": "slack-token", "np.slack.4": "slack-token", "np.slack.5": "slack-token",
    "np.slack.6": "slack-token", "np.slack.3": "slack-webhook",
    "np.stripe.1": "stripe-key", "np.stripe.2": "stripe-key",
    "np.http.1": "auth-header", "np.http.2": "auth-header",
    "np.mongodb.1": "url-password", "np.postgres.1": "url-password", "np.odbc.1": "conn-password",
    "np.generic.1": "keyword-generic", "np.generic.2": "keyword-generic",
    "np.generic.5": "keyword-generic", "np.generic.6": "keyword-generic",
    "np.generic.11": "keyword-generic", "np.generic.12": "keyword-generic",
    "np.generic.15": "keyword-generic", "np.generic.16": "keyword-generic",
    "np.django.1": "keyword-generic", "np.jwt.2": "keyword-generic", "np.jwt.3": "keyword-generic",
}

# detect-secrets plugin test -> pidx kind
DETECT_SECRETS = {
    "aws_key_test.py": "aws-access-key", "basic_auth_test.py": "url-password",
    "github_token_test.py": "github-token", "gitlab_token_test.py": "gitlab-token",
    "jwt_test.py": "jwt", "npm_test.py": "npm-token", "openai_test.py": "openai-key",
    "private_key_test.py": "private-key", "slack_test.py": "slack-token",
    "stripe_key_test.py": "stripe-key", "keyword_test.py": "keyword-any-value",
}

# secretlint (rule package, message id) -> pidx kind; a message id of None stands for any.
# Kinds pidx does not claim (Azure, Cloudflare, Vercel, ...) and the configurable `pattern`
# rules are left out, and so is the GCP rule's binary `.p12` input.
SECRETLINT = {
    ("anthropic", None): "anthropic-key",
    ("aws", "AWSAccessKeyID"): "aws-access-key", ("aws", "AWSSecretAccessKey"): "aws-secret-key",
    ("basicauth", None): "url-password", ("database-connection-string", None): "url-password",
    ("gcp", "PrivateKeyJSON"): "private-key",
    ("github", None): "github-token", ("gitlab", None): "gitlab-token",
    ("huggingface", None): "huggingface-token",
    ("npm", "NPM_ACCESS_TOKEN"): "npm-token",
    # `_authToken=` in .npmrc and an oauth token in package.json: a value after a token's name
    ("npm", "Npmrc_authToken"): "keyword-generic", ("npm", "PackageJSON_xOauthToken"): "keyword-generic",
    ("openai", None): "openai-key", ("privatekey", None): "private-key",
    ("slack", "SLACK_TOKEN"): "slack-token", ("slack", "IncomingWebhook"): "slack-webhook",
    ("stripe", None): "stripe-key",
}

# ripsecrets test file -> pidx kind (files of kinds pidx does not claim are left out)
RIPSECRETS = {
    "one_per_line/aws": "aws-secret-key", "one_per_line/github": "github-token",
    "one_per_line/gitlab": "gitlab-token", "one_per_line/jwt": "jwt",
    "one_per_line/npm": "npm-token", "one_per_line/slack": "slack-token",
    "one_per_line/stripe": "stripe-key", "one_per_line/url": "url-password",
    "one_per_line/random": "keyword-generic",
    "one_per_file/pem_key": "private-key", "one_per_file/private_key": "private-key",
    "one_per_file/aws_json": "aws-secret-key",
}


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True,
                          capture_output=True).stdout.decode("utf-8", "replace")


def shown(gitdir, commit, path):
    """The file at `path` in `commit`, or None when the snapshot does not hold it."""
    try:
        return git(gitdir, "show", f"{commit}:{path}")
    except subprocess.CalledProcessError:
        return None


def half_of(*parts):
    return "tune" if hashlib.sha1("\0".join(parts).encode()).digest()[0] % 2 == 0 else "report"


# ---- a small Go tokenizer: strings (raw and interpreted), identifiers, punctuation ----

GO_TOKEN = re.compile(r'''
    (?P<ws>\s+) | (?P<lc>//[^\n]*) | (?P<bc>/\*.*?\*/)
  | (?P<raw>`[^`]*`) | (?P<str>"(?:[^"\\\n]|\\.)*") | (?P<chr>'(?:[^'\\\n]|\\.)*')
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*) | (?P<num>[0-9][0-9a-fA-FxX._]*)
  | (?P<op>:=|[^\s])''', re.S | re.X)


def go_unquote(s):
    try:
        return json.loads(s)
    except ValueError:
        return ast.literal_eval(s)


def go_tokens(src):
    out = []
    for m in GO_TOKEN.finditer(src):
        k = m.lastgroup
        if k in ("ws", "lc", "bc"):
            continue
        v = m.group()
        if k == "raw":
            out.append(("s", v[1:-1]))
        elif k == "str":
            try:
                out.append(("s", go_unquote(v)))
            except (ValueError, SyntaxError):
                out.append(("?", v))
        else:
            out.append(("i" if k == "id" else "o", v))
    return out


def go_value(toks, env):
    """The string an expression of literals, known names, `+` and fmt.Sprintf("%s...") makes."""
    if len(toks) >= 3 and toks[0] == ("i", "fmt.Sprintf") and toks[1] == ("o", "("):
        args = split_top(toks[2:-1], ",")
        vals = [go_value(a, env) for a in args]
        if None in vals or not vals:
            return None
        fmt, rest = vals[0], vals[1:]
        if fmt.count("%s") != len(rest) or re.search(r"%[^s%]", fmt):
            return None
        return fmt.replace("%%", "\0") % tuple(rest) if rest else fmt
    parts = split_top(toks, "+")
    out = []
    for p in parts:
        if len(p) != 1:
            return None
        k, v = p[0]
        if k == "s":
            out.append(v)
        elif k == "i" and v in env:
            out.append(env[v])
        else:
            return None
    return "".join(out)


def split_top(toks, sep):
    parts, cur, depth = [], [], 0
    for t in toks:
        if t[0] == "o" and t[1] in "([{":
            depth += 1
        elif t[0] == "o" and t[1] in ")]}":
            depth -= 1
        if depth == 0 and t == ("o", sep):
            parts.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        parts.append(cur)
    return parts


def block(toks, i):
    """The tokens inside the bracket that opens at toks[i], and the index after its close."""
    depth, j = 0, i
    while j < len(toks):
        t = toks[j]
        if t[0] == "o" and t[1] in "([{":
            depth += 1
        elif t[0] == "o" and t[1] in ")]}":
            depth -= 1
            if depth == 0:
                return toks[i + 1:j], j + 1
        j += 1
    return toks[i + 1:], j


def go_consts(toks):
    """name -> string for every `name = "literal"` (var/const blocks and := alike)."""
    env = {}
    for i in range(len(toks) - 2):
        if toks[i][0] == "i" and toks[i + 1] in (("o", "="), ("o", ":=")) and toks[i + 2][0] == "s":
            end = i + 3
            while end < len(toks) and toks[end] == ("o", "+") and end + 1 < len(toks) and toks[end + 1][0] in "si":
                end += 2
            v = go_value(toks[i + 2:end], env)
            if v is not None and toks[i][1] not in env:
                env[toks[i][1]] = v
    return env


def gitleaks_cases(gitdir, commit, emit, manifest):
    files = [p for p in git(gitdir, "ls-tree", "-r", "--name-only", commit,
                            "cmd/generate/config/rules/").split("\n") if p.endswith(".go")]
    for path in files:
        src = git(gitdir, "show", f"{commit}:{path}")
        toks = go_tokens(src)
        rule, used = None, False
        i = 0
        while i < len(toks):
            t = toks[i]
            if t == ("i", "RuleID") and i + 2 < len(toks) and toks[i + 2][0] == "s":
                rule = toks[i + 2][1]
            # tps := []string{...}, tps = append(tps, ...), fps := []string{...}
            # utils.GenerateSampleSecret(s)("name", "LITERAL"): a literal secret, given bare
            if (t[0] == "i" and t[1].startswith("utils.GenerateSampleSecret") and i + 5 < len(toks)
                    and toks[i + 4][0] == "s" and toks[i + 5] == ("o", ")")):
                kind = GITLEAKS.get(rule)
                if kind and kind != "keyword-generic":
                    emit({"source": "gitleaks", "rule": rule, "kind": kind, "text": toks[i + 4][1],
                          "positive": True, "path": path})
                    used = True
            if t[0] == "i" and t[1] in ("tps", "fps") and i + 1 < len(toks) and toks[i + 1][1] in ("=", ":="):
                positive = t[1] == "tps"
                # only a literal list (`[]string{...}`) or `append(tps, ...)`: a call such
                # as `utils.GenerateSampleSecrets("name", ...)` has no literal cases
                if toks[i + 2][0] == "i" and toks[i + 2][1] != "append":
                    i += 2
                    continue
                j = i + 2
                while j < len(toks) and toks[j][1] not in ("{", "("):
                    j += 1
                inner, nxt = block(toks, j)
                kind = GITLEAKS.get(rule)
                for el in split_top(inner, ","):
                    if len(el) == 1 and el[0][0] == "s" and kind:
                        emit({"source": "gitleaks", "rule": rule, "kind": kind, "text": el[0][1],
                              "positive": positive, "path": path})
                        used = True
                i = nxt
                continue
            i += 1
        if used:
            manifest.append(path)


def trufflehog_cases(gitdir, commit, emit, manifest):
    for folder, kind in TRUFFLEHOG.items():
        listing = git(gitdir, "ls-tree", "-r", "--name-only", commit, f"pkg/detectors/{folder}/")
        for path in listing.split("\n"):
            name = os.path.basename(path)
            if not name.endswith("_test.go") or "integration" in name:
                continue
            if folder in ("slack", "gitlab/v1") and os.path.dirname(path) != f"pkg/detectors/{folder}":
                continue
            src = git(gitdir, "show", f"{commit}:{path}")
            toks = go_tokens(src)
            env = go_consts(toks)
            used = False
            for i, t in enumerate(toks):
                if t != ("i", "input") or toks[i + 1] != ("o", ":"):
                    continue
                # the input expression runs to the next top-level comma
                j, depth = i + 2, 0
                while j < len(toks) and not (depth == 0 and toks[j] == ("o", ",")):
                    depth += toks[j][1] in "([{" and toks[j][0] == "o"
                    depth -= toks[j][1] in ")]}" and toks[j][0] == "o"
                    j += 1
                text = go_value(toks[i + 2:j], env)
                # want: []string{...} | nil
                k = j
                while k < len(toks) and toks[k] != ("i", "want"):
                    if toks[k] == ("i", "input"):
                        break
                    k += 1
                if text is None or k >= len(toks) or toks[k] != ("i", "want"):
                    continue
                if toks[k + 2] == ("i", "nil"):
                    wants = []
                else:
                    b = k + 2
                    while toks[b][1] != "{":
                        b += 1
                    inner, _ = block(toks, b)
                    wants = [go_value(el, env) for el in split_top(inner, ",")]
                    if None in wants:
                        continue
                emit({"source": "trufflehog", "rule": folder, "kind": kind, "text": text,
                      "positive": bool(wants), "secrets": wants, "path": path})
                used = True
            if used:
                manifest.append(path)


class PyEval:
    """Evaluates the literal expressions of a test module: constants, `'...'.format(...)`,
    `%`, `+` and f-strings of names the module binds to constants."""

    def __init__(self, tree):
        self.env = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                try:
                    self.env[node.targets[0].id] = self.ev(node.value)
                except ValueError:
                    pass

    def ev(self, n):
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.Name) and n.id in self.env:
            return self.env[n.id]
        if isinstance(n, ast.Tuple):
            return tuple(self.ev(x) for x in n.elts)
        if isinstance(n, ast.List):
            return [self.ev(x) for x in n.elts]
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Mod, ast.Mult)):
            a, b = self.ev(n.left), self.ev(n.right)
            return a + b if isinstance(n.op, ast.Add) else (a % b if isinstance(n.op, ast.Mod) else a * b)
        if isinstance(n, ast.JoinedStr):
            return "".join(str(self.ev(v.value)) if isinstance(v, ast.FormattedValue) else v.value
                           for v in n.values)
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "format"
                and not n.keywords):
            return self.ev(n.func.value).format(*[self.ev(a) for a in n.args])
        raise ValueError("not a literal")


def detect_secrets_cases(gitdir, commit, emit, manifest):
    for name, kind in DETECT_SECRETS.items():
        path = f"tests/plugins/{name}"
        src = shown(gitdir, commit, path)
        if src is None:
            continue
        tree = ast.parse(src)
        pe = PyEval(tree)
        used = False
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "parametrize"):
                continue
            names = pe.ev(node.args[0]) if node.args else ""
            names = [x.strip() for x in (names.split(",") if isinstance(names, str) else names)]
            try:
                rows = pe.ev(node.args[1]) if len(node.args) > 1 else pe.ev(node.keywords[0].value)
            except (ValueError, IndexError, KeyError, TypeError):
                continue
            for row in rows:
                row = row if isinstance(row, tuple) else (row,)
                d = dict(zip(names, row))
                text = d.get("line", d.get("payload", d.get("content")))
                if not isinstance(text, str):
                    continue
                flag = d.get("should_flag", d.get("expected_result", True))
                positive = bool(flag) if not isinstance(flag, str) else True
                k = kind
                if kind == "slack-token" and "hooks.slack.com" in text:
                    k = "slack-webhook"
                secrets = [flag] if isinstance(flag, str) else []
                emit({"source": "detect-secrets", "rule": name[:-3], "kind": k, "text": text,
                      "positive": positive, "secrets": secrets, "path": path})
                used = True
        if used:
            manifest.append(path)


def noseyparker_cases(gitdir, commit, emit, manifest):
    import yaml  # PyYAML: Debian's python3-yaml or pip's PyYAML

    folder = "crates/noseyparker/data/default/builtin/rules/"
    for path in git(gitdir, "ls-tree", "-r", "--name-only", commit, folder).split("\n"):
        if not path.endswith(".yml"):
            continue
        doc = yaml.safe_load(git(gitdir, "show", f"{commit}:{path}")) or {}
        used = False
        for rule in doc.get("rules") or []:
            kind = NOSEYPARKER.get(rule.get("id"))
            if not kind:
                continue
            for key, positive in (("examples", True), ("negative_examples", False)):
                for text in rule.get(key) or []:
                    emit({"source": "noseyparker", "rule": rule["id"], "kind": kind, "text": text,
                          "positive": positive, "path": path})
                    used = True
        if used:
            manifest.append(path)


def secretlint_kind(package, message_id):
    return SECRETLINT.get((package, message_id)) or SECRETLINT.get((package, None))


def lines_around(text, start, end):
    """The whole lines of `text` that hold the range start..end."""
    a = text.rfind("\n", 0, start) + 1
    b = text.find("\n", end)
    return text[a:] if b < 0 else text[a:b]


def secretlint_cases(gitdir, commit, emit, manifest):
    root = "packages/@secretlint/"
    listing = git(gitdir, "ls-tree", "-r", "--name-only", commit, root).split("\n")
    snapshots = {}
    for path in listing:
        m = re.match(r"packages/@secretlint/secretlint-rule-([a-z0-9-]+)/test/snapshots/([^/]+)/(.+)$", path)
        if m and not m.group(1).startswith("preset"):
            snapshots.setdefault((m.group(1), m.group(2)), []).append(m.group(3))
    for (package, snap), files in sorted(snapshots.items()):
        # a snapshot run with options (allow lists, switched-off checks) tests the options
        if "output.json" not in files or any(f.startswith((".secretlintrc", "options")) for f in files):
            continue
        folder = f"{root}secretlint-rule-{package}/test/snapshots/{snap}/"
        try:
            out = json.loads(shown(gitdir, commit, folder + "output.json") or "")
        except ValueError:
            continue
        text = out.get("sourceContent")
        if not isinstance(text, str) or "\0" in text:
            continue
        used = False
        for msg in out.get("messages") or []:
            kind = secretlint_kind(package, msg.get("messageId"))
            start, end = msg.get("range", [0, 0])
            if not kind or not 0 <= start < end <= len(text):
                continue
            emit({"source": "secretlint", "rule": f"{package}:{msg.get('messageId')}", "kind": kind,
                  "text": lines_around(text, start, end), "positive": True,
                  "secrets": [text[start:end]], "path": folder + "output.json"})
            used = True
        kinds = [k for (p, _), k in SECRETLINT.items() if p == package]
        if not out.get("messages") and kinds and text.strip():
            emit({"source": "secretlint", "rule": package, "kind": kinds[0], "text": text,
                  "positive": False, "path": folder + "output.json"})
            used = True
        if used:
            manifest.append(folder + "output.json")


def ripsecrets_cases(gitdir, commit, emit, manifest):
    for name, kind in RIPSECRETS.items():
        path = f"test/{name}"
        text = shown(gitdir, commit, path)
        if text is None:
            continue
        texts = [text] if name.startswith("one_per_file/") else [l for l in text.split("\n") if l.strip()]
        for t in texts:
            k = "slack-webhook" if kind == "slack-token" and "hooks.slack.com" in t else kind
            emit({"source": "ripsecrets", "rule": name, "kind": k, "text": t, "positive": True,
                  "path": path})
        manifest.append(path)
    for line in git(gitdir, "show", f"{commit}:test/none").split("\n"):
        # lines silenced by ripsecrets' own allow mechanisms (a pragma comment, its
        # .secretsignore file) are secrets, not negative examples of a format
        if not line.strip() or "pragma: allowlist" in line or ".secretsignore" in line:
            continue
        emit({"source": "ripsecrets", "rule": "none", "kind": "negatives-only", "text": line,
              "positive": False, "path": "test/none"})
    manifest.append("test/none")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--gitleaks", default=f"{MIRROR}/gitleaks+gitleaks/repo")
    ap.add_argument("--trufflehog", default=f"{MIRROR}/trufflesecurity+trufflehog/repo")
    ap.add_argument("--detect-secrets", default=f"{MIRROR}/Yelp+detect-secrets/repo")
    ap.add_argument("--noseyparker", default=f"{MIRROR}/praetorian-inc+noseyparker/repo")
    ap.add_argument("--secretlint", default=f"{MIRROR}/secretlint+secretlint/repo")
    ap.add_argument("--ripsecrets", default=f"{MIRROR}/sirwart+ripsecrets/repo")
    a = ap.parse_args()
    sources = [("gitleaks/gitleaks", a.gitleaks, gitleaks_cases),
               ("trufflesecurity/trufflehog", a.trufflehog, trufflehog_cases),
               ("Yelp/detect-secrets", a.detect_secrets, detect_secrets_cases),
               ("praetorian-inc/noseyparker", a.noseyparker, noseyparker_cases),
               ("secretlint/secretlint", a.secretlint, secretlint_cases),
               ("sirwart/ripsecrets", a.ripsecrets, ripsecrets_cases)]
    new_set = {"secretlint/secretlint", "sirwart/ripsecrets"}
    cases, manifest_rows, missing = [], [], []
    seen = set()
    for repo, gitdir, extract in sources:
        if not os.path.isdir(gitdir):
            missing.append(repo)
            continue
        commit = git(gitdir, "rev-parse", "HEAD").strip()
        files = []

        def emit(c, repo=repo, commit=commit):
            key = (c["source"], c["kind"], c["text"])
            if key in seen:
                return
            seen.add(key)
            c.update(repo=repo, commit=commit, half=half_of(c["source"], c["path"], c["text"]),
                     set="new" if repo in new_set else "old")
            cases.append(c)

        extract(gitdir, commit, emit, files)
        manifest_rows += [(repo, commit, p) for p in files]
    with open(a.out, "w", encoding="utf-8") as f:
        for c in cases:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    with open(a.out + ".manifest.tsv", "w", encoding="utf-8") as f:
        f.write("repo\tcommit\tpath\n")
        for r in manifest_rows:
            f.write("\t".join(r) + "\n")
    for repo in missing:
        print(f"fetch.py: no snapshot of {repo}; its cases are left out", file=sys.stderr)
    pos = sum(c["positive"] for c in cases)
    print(json.dumps({"cases": len(cases), "positive": pos, "negative": len(cases) - pos,
                      "files": len(manifest_rows), "missing": missing}))
    if len(missing) == len(sources):
        sys.exit(1)


if __name__ == "__main__":
    main()
