# What gflops.gp, residency.gp and stages.gp share; each loads it (from the
# repository root) after its set terminal, which would undo termoption.
set output out
set datafile separator "\t"
set termoption noenhanced
set grid ytics lc rgb "#dddddd"
