# Sourced by benches/run.sh for --scaling: one corpus and one compact bench run per size, then
# the side-by-side table. Uses run.sh's variables: scaling, out, seed, pi_max, clean, bench_args.
machine="$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
if [[ " ${bench_args[*]-} " != *" --no-pi "* ]] && command -v node >/dev/null && command -v npm >/dev/null; then
  tests/conformance/setup-pi.sh >/dev/null || echo "run.sh: pi's package did not install; pi rows will be skipped" >&2
fi
command -v rg >/dev/null || echo "run.sh: rg missing (apt-get install ripgrep): the rg cells will be skipped" >&2
rows=()
for spec in ${scaling//,/ }; do
  n="${spec%%:*}"
  size="${spec#*:}"
  [ -n "$n" ] && [ -n "$size" ] && [ "$n" != "$spec" ] || { echo "run.sh: --scaling wants N:SIZE, got $spec" >&2; exit 2; }
  dir="$out/$n"
  mkdir -p "$dir/work"
  if [ ! -d "$dir/sessions" ]; then
    echo "run.sh: generating $n sessions ($size) into $dir/sessions" >&2
    "$tdir"/release/examples/gen_corpus --out "$dir/sessions" --sessions "$n" --bytes "$size" --seed "$seed"
  else
    echo "run.sh: reusing the corpus in $dir/sessions (delete it to regenerate)" >&2
  fi
  extra=()
  [ "$n" -le "$pi_max" ] || extra+=(--no-pi)
  echo "run.sh: $n sessions: bench --compact (load average $(cut -d' ' -f1-3 /proc/loadavg))" >&2
  "$tdir"/release/examples/bench --pidx "$tdir/release/pidx" --corpus "$dir/sessions" --work "$dir/work" --compact \
    --rows-out "$dir/rows.json" --watch-appends 0 --huge-line-mb 0 \
    ${bench_args[@]+"${bench_args[@]}"} ${extra[@]+"${extra[@]}"} > "$dir/bench.md"
  if [ "$clean" = 1 ]; then
    rm -rf "$dir/sessions" "$dir/work"
  fi
done
for spec in ${scaling//,/ }; do
  if [ -f "$out/${spec%%:*}/rows.json" ]; then rows+=("$out/${spec%%:*}/rows.json"); fi
done
{
  echo "Machine: $machine, $(date -u +%Y-%m-%d)"
  echo
  "$tdir"/release/examples/bench --merge "${rows[@]}"
} | tee "$out/scaling.md"
echo "run.sh: table written to $out/scaling.md" >&2
