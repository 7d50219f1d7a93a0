# Wall-clock helpers the benchmark scripts share (sourced, not run).
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
