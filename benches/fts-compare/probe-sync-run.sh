#!/bin/bash
# usage: run.sh NAME SESSIONS_DIR [env assignments...]
name=$1; root=$2; shift 2
out=/tmp/probe/results/$name
mkdir -p $out /tmp/probe/home
rm -rf /tmp/probe/$name.db* /tmp/probe/$name.tantivy
bytes=$(du -sb --apparent-size "$root" | cut -f1)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
env "$@" HOME=/tmp/probe/home /usr/bin/time -f "%e %U %S %M" -o $out/time \
  /work/targets/tantivy/release/pidx --root "$root" --db /tmp/probe/$name.db sync > $out/stdout 2> $out/stderr &
tpid=$!
sleep 0.2
pid=$(pgrep -P $tpid)
mr=0; ma=0; mf=0
: > $out/threads; : > $out/series
while kill -0 $pid 2>/dev/null; do
  read r a f < <(awk '/^VmRSS/{r=$2}/^RssAnon/{a=$2}/^RssFile/{f=$2}END{print r+0, a+0, f+0}' /proc/$pid/status 2>/dev/null)
  echo "$(date +%s.%N | cut -c1-13) $r $a $f" >> $out/series
  [ "${r:-0}" -gt $mr ] && mr=$r; [ "${a:-0}" -gt $ma ] && ma=$a; [ "${f:-0}" -gt $mf ] && mf=$f
  # per-thread CPU ticks: tid comm utime+stime (last sample per tid wins)
  for t in /proc/$pid/task/*/stat; do cat $t 2>/dev/null; echo; done | \
    sed -E 's/^([0-9]+) \((.*)\) /\1 \2|/' | awk -F'|' 'NF==2{split($1,a," "); split($2,b," "); print a[1], a[2], b[12]+b[13]}' >> $out/threads
  sleep 0.5
done
wait $tpid
load1=$(cut -d' ' -f1-3 /proc/loadavg)
read e u s m < $out/time
db=$(du -cb /tmp/probe/$name.db* | tail -1 | cut -f1)
tv=$(du -sb /tmp/probe/$name.tantivy 2>/dev/null | cut -f1)
hz=$(getconf CLK_TCK)
thr=$(awk -v hz=$hz '{last[$1]=$3; name[$1]=$2} END{for(t in last) s[name[t]]+=last[t]; for(n in s) printf "%s=%.1fs ", n, s[n]/hz}' $out/threads)
echo "$name wall=${e}s user=${u}s sys=${s}s cpu=$(echo "$u+$s"|bc)s MBps=$(echo "scale=1;$bytes/1000000/$e"|bc) maxrss=$((m/1024))MB peakVmRSS=$((mr/1024))MB peakAnon=$((ma/1024))MB peakFile=$((mf/1024))MB db=$((db/1000000))MB tantivy=$((${tv:-0}/1000000))MB jsonl=$((bytes/1000000))MB load_before=[$load0] load_after=[$load1] env=[$*] threads=[$thr]" | tee -a /tmp/probe/results/all.txt
