# The pipeline's gain (time saved, percent of the synchronous kernel's time)
# for the lesson's tile against resident blocks per SM, with the
# range over the processes, from residency.values.tsv (tools/plots/plot.py:
# blocks per SM, then median, min and max of the gain for cuda::pipeline
# and the thread-scope loop at N = 2048, then the same at N = 4096).
# Run it as gflops.gp says, with in='residency.values.tsv'.
if (!exists("narrow")) narrow = 0
if (narrow) {
    set terminal svg size 360,440 dynamic font "sans,13" background "white"
    set key below vertical nobox
    set xlabel "resident blocks per SM"
    set ylabel "gain (%)"
    set title sprintf("Residency, %s", gpu)
    set lmargin 8
    set rmargin 2
} else {
    set terminal svg size 720,420 dynamic font "sans,13" background "white"
    set key top right box opaque
    set xlabel "resident blocks per SM (--blocks-per-sm; the last is natural)"
    set ylabel "time saved by the pipeline, % (median)"
    set title sprintf("The pipeline's gain against residency, %s", gpu)
}
load "tools/plots/common.gp"
set xrange [0.5:4.5]
# The last row is the natural residency: its tick says so.
set xtics () nomirror
set yrange [-5:50]
set format y "%.0f"
set arrow from 0.5,0 to 4.5,0 nohead dt 2 lc rgb "#888888"
plot in every ::1 using 1:2:3:4:xtic(sprintf(column(0) < 2 ? "%d" : \
       "%d (natural)", $1)) with yerrorlines lw 2 pt 7 ps 1.1 \
       lc rgb "#1b6ac9" title "cuda::pipeline, N = 2048", \
     in every ::1 using 1:5:6:7 with yerrorlines lw 2 dt 2 pt 6 ps 1.1 \
       lc rgb "#1b6ac9" title "thread-scope, N = 2048", \
     in every ::1 using 1:8:9:10 with yerrorlines lw 2 pt 5 ps 1.1 \
       lc rgb "#d9541e" title "cuda::pipeline, N = 4096", \
     in every ::1 using 1:11:12:13 with yerrorlines lw 2 dt 2 pt 4 ps 1.1 \
       lc rgb "#d9541e" title "thread-scope, N = 4096"
