# The gain (time saved, percent) and shared memory per block against the
# pipeline depth, from stages.values.tsv (tools/plots/plot.py: stages;
# median, min and max of the gain at N = 2048 over the processes; shared memory per block, bytes).
# Run it as gflops.gp says, with in='stages.values.tsv'.
if (!exists("narrow")) narrow = 0
if (narrow) {
    set terminal svg size 360,440 dynamic font "sans,13" background "white"
    set key below vertical Left reverse nobox maxrows 2 height 1.5
    set xlabel "pipeline stages, N = 2048"
    set ylabel "gain (%)"
    set y2label "shared memory per block (KiB)"
    set title sprintf("Pipeline depth, %s", gpu)
    set lmargin 8
    set rmargin 7
} else {
    set terminal svg size 720,420 dynamic font "sans,13" background "white"
    set key bottom right box opaque
    set xlabel "pipeline stages (STAGES), N = 2048"
    set ylabel "time saved by the pipeline, % (median)"
    set y2label "static shared memory per block (KiB)"
    set title sprintf("Pipeline depth on %s", gpu)
}
set label "48 KiB static limit" at first 1.6, second 50.3 tc rgb "#aa0000"
load "tools/plots/common.gp"
set xrange [1.5:4.5]
set xtics 1
set y2tics
set ytics nomirror
set yrange [-5:15]
set y2range [0:60]
set format y "%.0f"
set arrow from 1.5,0 to 4.5,0 nohead dt 2 lc rgb "#888888"
set arrow from first 1.5, second 48 to first 4.5, second 48 nohead dt 3 \
    lc rgb "#aa0000"
plot in every ::1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.3 \
       lc rgb "#1b6ac9" title "gain", \
     in every ::1 using 1:($5/1024) axes x1y2 with linespoints lw 2 pt 5 \
       ps 1.3 lc rgb "#d9541e" title "shared memory per block"
