#!/usr/bin/env python3
"""Both halves of the secrets benchmark, one command (see docs/secrets.md):

precision  ordinary code and prose (corpus.py: set `old`, the Python standard library and the
           cargo registry's crate sources; set `new`, npm packages' JavaScript/TypeScript and
           Debian's package docs; as `read` tool results in pi sessions), `pidx secrets
           --json` over them: findings per 100 MB, each one listed with the text it matched.
recall     the public scanners' test cases (fetch.py; set `old`: gitleaks, trufflehog,
           detect-secrets, Nosey Parker; set `new`: secretlint, ripsecrets): for each pidx
           kind, how many of their positive examples pidx finds (and redacts every listed
           secret of), and how many of their negative examples it flags.

usage: run.py --pidx BIN --cases-bin BIN [--half report|tune|spare|all]
              [--set old|new|fresh|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|fourteenth|all]
              [--work DIR] [--misses] [--only precision|recall] [--dir DIR]
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def strings(v, out):
    if isinstance(v, str):
        out.append(v)
    elif isinstance(v, list):
        for x in v:
            strings(x, out)
    elif isinstance(v, dict):
        for x in v.values():
            strings(x, out)


# A scanner's positive example that is a placeholder by pidx's documented rule (docs/secrets.md:
# never flagged): the words `password`/`secret`/`username` standing as the value, `my...`
# stand-ins, one character repeated, or `xxxx`. Counted apart, the same way for every source.
PLACEHOLDER = re.compile(r"""(?ix)
    ://(?:user(?:name)?|my\w*):(?:password|secret|pass)@
  | \b(?:password|pwd)=(?:secret|password|my\w+)\b
  | ([A-Za-z0-9])\1{15}
  | xxxxxxxx
""")


def placeholder(text):
    return bool(PLACEHOLDER.search(text))


def score(cases_bin, cases):
    inp = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases)
    res = subprocess.run([cases_bin], input=inp.encode(), capture_output=True, check=True)
    return [json.loads(l) for l in res.stdout.decode().splitlines()]


def short(s, n=90):
    s = s.replace("\n", "\\n")
    return s if len(s) <= n else s[:n] + "..."


def precision(a, work, cset):
    if cset in ("fresh", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh") and a.half != "all":
        sys.exit(f"run.py: the `{cset}` set has no halves: use --half all")
    if a.half == "spare" and cset != "new":
        print(f"run.py: SKIPPED precision of set {cset}: only the `new` set has a spare half\n")
        return None
    sessions = os.path.join(work, f"sessions-{cset}-{a.half}")
    if not os.path.isdir(sessions):
        made = subprocess.run([sys.executable, os.path.join(HERE, "corpus.py"), "--out", sessions,
                               "--set", cset, "--half", a.half]
                              + (["--dir", a.dir] if a.dir else []), capture_output=True, text=True)
        if made.returncode != 0:
            sys.exit(f"run.py: corpus.py failed: {made.stderr.strip()}")
        with open(sessions + ".json", "w") as f:
            f.write(made.stdout)
    size = json.load(open(sessions + ".json"))
    if not size["bytes"]:
        print(f"run.py: SKIPPED precision of set {cset}: its corpus is empty (see corpus.py)\n")
        return None
    db = os.path.join(work, f"index-{cset}-{a.half}.db")
    res = subprocess.run([a.pidx, "--db", db, "--root", sessions, "--json", "secrets"],
                         capture_output=True, text=True)
    if res.returncode not in (0, 1):
        sys.exit(f"run.py: pidx secrets failed: {res.stderr.strip()}")
    found = json.loads(res.stdout or "[]")
    n = sum(f["count"] for f in found)
    mb = size["bytes"] / 1e6
    print(f"## precision: ordinary code (set {cset}, {a.half} half)\n")
    print(f"{size['files']} files, {mb:.1f} MB of text in tool results; `pidx secrets`: "
          f"{n} findings in {len(found)} entries = {n / mb * 100:.2f} per 100 MB\n")
    # What matched: the entry's strings through the detector, and the file it was read from.
    show = []
    for f in found:
        with open(f["path"], encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        entry = json.loads(lines[f["line"] - 1])
        call = json.loads(lines[f["line"] - 2])
        src = ""
        for c in call.get("message", {}).get("content", []):
            if isinstance(c, dict) and c.get("type") == "toolCall":
                src = c["arguments"].get("path", "")
        texts = []
        strings(entry, texts)
        for r in score(a.cases_bin, [{"text": t} for t in texts]):
            for rule, text in r["found"]:
                show.append((rule, src, text))
    by_rule = collections.Counter(r for r, _, _ in show)
    for rule, k in sorted(by_rule.items()):
        print(f"- {rule}: {k}")
    for rule, src, text in show:
        print(f"  {rule}  {src}  {short(text)}")
    print()
    return n / mb * 100


def load_cases(work):
    cases_file = os.path.join(work, "cases.jsonl")
    cases = []
    if os.path.exists(cases_file):
        cases = [json.loads(l) for l in open(cases_file, encoding="utf-8")]
    # a file written before the `new` sources were added has no `set`: write it again
    if not cases or any("set" not in c for c in cases):
        r = subprocess.run([sys.executable, os.path.join(HERE, "fetch.py"), "--out", cases_file])
        if r.returncode != 0:
            return None
        cases = [json.loads(l) for l in open(cases_file, encoding="utf-8")]
    return cases


def recall(a, all_cases, cset):
    cases = [c for c in all_cases if c["set"] == cset and a.half in ("all", c["half"])]
    if a.half == "spare":
        print(f"run.py: SKIPPED recall of set {cset}: the scanners' cases have no spare half "
              "(each is tune or report)\n")
        return None
    if not cases:
        print(f"run.py: SKIPPED recall of set {cset}: none of its scanners' snapshots could be "
              "read (see fetch.py)\n")
        return None
    scored = score(a.cases_bin, cases)
    kinds = collections.defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    misses, flagged = [], []
    for c in scored:
        k = kinds[c["kind"]]
        if c["positive"] and placeholder(c["text"]):
            k[4] += 1
            k[5] += c["redacted"]
            if not c["redacted"]:
                misses.append(c)
        elif c["positive"]:
            k[0] += 1
            if c["redacted"]:
                k[1] += 1
            else:
                misses.append(c)
        else:
            k[2] += 1
            if c["found"]:
                k[3] += 1
                flagged.append(c)
    print(f"## recall: public scanners' test cases (set {cset}, {a.half} half)\n")
    print("| kind | positives | caught | recall | placeholders caught | negatives | flagged |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    tp = tc = tph = tpc = 0
    for kind in sorted(kinds):
        p, c, n, f, ph, pc = kinds[kind]
        tp, tc, tph, tpc = tp + p, tc + c, tph + ph, tpc + pc
        rec = f"{100 * c / p:.1f}%" if p else "-"
        print(f"| {kind} | {p} | {c} | {rec} | {pc}/{ph} | {n} | {f} |")
    print(f"| all | {tp} | {tc} | {100 * tc / max(tp, 1):.1f}% | {tpc}/{tph} | | |\n")
    claimed = [k for k in kinds if k not in ("keyword-generic", "negatives-only")]
    cp = sum(kinds[k][0] for k in claimed)
    cc = sum(kinds[k][1] for k in claimed)
    print(f"recall over the kinds with a format (all but keyword-generic): {cc}/{cp} = "
          f"{100 * cc / max(cp, 1):.1f}%\n")
    if a.misses:
        print("missed:")
        for c in misses:
            tag = " (placeholder)" if placeholder(c["text"]) else ""
            print(f"  {c['kind']}  {c['source']}:{c['rule']}{tag}  {short(c['text'], 120)}")
        print("negatives flagged:")
        for c in flagged:
            print(f"  {c['kind']}  {c['source']}:{c['rule']}  {short(c['text'], 120)}  -> {c['found'][0][0]}")
    return tc / max(tp, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pidx", required=True)
    ap.add_argument("--cases-bin", required=True)
    ap.add_argument("--half", default="report", choices=("report", "tune", "spare", "all"),
                    help="spare: the `new` corpus's unread half (precision only)")
    ap.add_argument("--set", default="all", choices=("old", "new", "fresh", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh",
                                          "fourteenth", "all"),
                    help="old: the first corpora and scanners; new: the second held-out ones; "
                    "fresh, fifth ... eleventh: the fourth to eleventh rounds' held-out code, precision only, "
                    "--half all; fourteenth: the fourteenth round's registry packages, precision only")
    ap.add_argument("--dir", default=None,
                    help="set fourteenth: the unpacked packages (corpus.py --dir)")
    ap.add_argument("--work", default=None, help="kept between runs (default: a temp dir)")
    ap.add_argument("--misses", action="store_true", help="list every miss and flagged negative")
    ap.add_argument("--only", choices=("precision", "recall"))
    a = ap.parse_args()
    for flag, path in (("--pidx", a.pidx), ("--cases-bin", a.cases_bin)):
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            sys.exit(f"run.py: {flag} {path} is not an executable; build it with "
                     "`cargo build --release --bin pidx --example secrets_cases`")
    work = a.work or tempfile.mkdtemp(prefix="pidx-secrets-")
    os.makedirs(work, exist_ok=True)
    sets = ("old", "new") if a.set == "all" else (a.set,)
    if a.only != "recall":
        for cset in sets:
            precision(a, work, cset)
    if a.only != "precision":
        cases = load_cases(work)
        if cases is None:
            print("run.py: SKIPPED recall: no scanner snapshot could be read (see fetch.py)")
            return
        for cset in sets:
            if cset in ("fresh", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh",
                        "fourteenth"):
                print(f"run.py: SKIPPED recall of set {cset}: it is ordinary code only\n")
                continue
            recall(a, cases, cset)


if __name__ == "__main__":
    main()
