# Helpers the benchmark scripts share (sourced, not run): wall-clock times and the top-20
# comparison of two searches.
now() { date +%s.%N; }

# Milliseconds of "$@", the median of 5 runs (its output and failure ignored).
median() {
  local times=() a b
  for _ in 1 2 3 4 5; do
    a=$(now); "$@" >/dev/null 2>&1 || true; b=$(now)
    times+=("$(echo "($b - $a) * 1000" | bc)")
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n 3p | xargs printf '%.0f'
}

# Whether two `search --json` answers (files) are the same hits in the same order with the
# same scores: "identical (N)", or how many they share and where they first differ, or the
# first hit whose score differs by more than a millionth (the two searches blend recency a
# moment apart). A hit is its file (from the sessions folder on, so two copies of a corpus
# compare), entry and kind; an answer that is not JSON (a failed search) is no hits.
compare() {
  python3 - "$1" "$2" <<'PY'
import json, sys
def hits(f):
    try:
        return json.load(open(f))
    except ValueError:
        return []
def top(v):
    return [(h["path"].rsplit("/sessions/", 1)[-1], h.get("entryId"), h["kind"]) for h in v]
want_hits, got_hits = hits(sys.argv[1]), hits(sys.argv[2])
want, got = top(want_hits), top(got_hits)
def apart(a, b):
    return a is not None and b is not None and abs(a - b) > 1e-6 * max(abs(b), 1.0)
drift = next((i for i, (a, b) in enumerate(zip(got_hits, want_hits))
              if apart(a.get("score"), b.get("score"))), None)
if want == got and drift is not None:
    print(f"same hits ({len(want)}), score {drift + 1} differs: "
          f"{got_hits[drift]['score']} against {want_hits[drift]['score']}")
elif want == got:
    print(f"identical ({len(want)})")
else:
    first = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
    print(f"{len(set(want) & set(got))} of {len(want)} shared, first difference at {first + 1}")
PY
}
