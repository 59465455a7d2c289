# Turns bench/run's SUMMARY|path|now|floor|goal lines into the Markdown table at the top of its
# report: the ratio of each figure to its floor from the same run, and whether its goal is met.
# Goals it checks: "<=Nx" (ratio to the floor), "<N unit", "<=N ms" and ">=N unit" (the figure itself, KiB
# and MiB converted), "=N"; any other goal is shown and left to the reader ("see the section").
BEGIN {
  FS = "|"
  print "| path | now | floor | ratio | goal | met |"
  print "| --- | --- | --- | --- | --- | --- |"
}
function num(s) { return s + 0 }
function kib(s) { return s ~ /MiB/ ? num(s) * 1024 : num(s) }
$1 == "SUMMARY" {
  path = $2; now = $3; floor = $4; goal = $5
  ratio = "-"
  if (floor ~ /^[0-9.]+/ && num(floor) > 0 && now ~ /^[0-9.]+/) ratio = sprintf("%.1fx", num(now) / num(floor))
  met = "see the section"
  g = goal; sub(/^<=/, "", g)
  if (goal ~ /^<=[0-9.]+x$/ && ratio != "-") met = (num(now) / num(floor) <= num(g)) ? "yes" : "NO"
  else if (goal ~ /^<=[0-9.]+ *ms$/ && now ~ /^[0-9.]+/) { g = goal; sub(/^<=/, "", g); met = (num(now) <= num(g)) ? "yes" : "NO" }
  else if (goal ~ /^<[0-9.]+ *(KiB|MiB)/ && now ~ /^[0-9.]+/) { g = goal; sub(/^</, "", g); met = (kib(now) < kib(g)) ? "yes" : "NO" }
  else if (goal ~ /^<[0-9.]+/ && now ~ /^[0-9.]+/) { g = goal; sub(/^</, "", g); met = (num(now) < num(g)) ? "yes" : "NO" }
  else if (goal ~ /^>=[0-9.]+/ && now ~ /^[0-9.]+/) { g = goal; sub(/^>=/, "", g); met = (num(now) >= num(g)) ? "yes" : "NO" }
  else if (goal ~ /^=[0-9.]+$/ && now ~ /^[0-9.]+/) { g = goal; sub(/^=/, "", g); met = (num(now) == num(g)) ? "yes" : "NO" }
  printf "| %s | %s | %s | %s | %s | %s |\n", path, now, floor, ratio, goal, met
}
