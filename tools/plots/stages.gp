# piped/sync and shared memory per block against the pipeline depth, from
# the exercise table (make exercise: stages,piped_over_sync,piped_smem_bytes,...).
# gnuplot -e "in='EXERCISE.csv'; out='OUT.svg'; gpu='NVIDIA H200'; narrow=0" tools/plots/stages.gp
# narrow=1 draws the phone version (see gflops.gp); values='FILE' also
# writes the plotted numbers to FILE as a tab-separated table.
if (!exists("narrow")) narrow = 0
if (narrow) {
    set terminal svg size 360,440 dynamic font "sans,13" background "white"
    set key below vertical Left reverse nobox maxrows 2 height 1.5
    set xlabel "pipeline stages, N = 2048"
    set ylabel "piped / sync (below 1: faster)"
    set y2label "shared memory per block (KiB)"
    set title sprintf("Pipeline depth, %s", gpu)
    set label "48 KiB static limit" at first 1.6, second 50.3 tc rgb "#aa0000"
    ydiv2 = 1024.0
    set y2range [0:60]
    set format y "%.2f"
    set lmargin 8
    set rmargin 7
} else {
    set terminal svg size 720,420 dynamic font "sans,13" background "white"
    set key bottom right box opaque
    set xlabel "pipeline stages (STAGES), N = 2048"
    set ylabel "piped / sync (median times; below 1: pipeline faster)"
    set y2label "static shared memory per block (bytes)"
    set title sprintf("Pipeline depth on %s", gpu)
    set label "48 KiB static limit (49152 B)" at first 1.6, second 51500 tc rgb "#aa0000"
    ydiv2 = 1.0
    set y2range [0:60000]
}
set output out
set datafile separator ","
set termoption noenhanced
set xrange [1.5:4.5]
set xtics 1
set y2tics
set ytics nomirror
set yrange [0.85:1.05]
set grid ytics lc rgb "#dddddd"
set arrow from 1.5,1 to 4.5,1 nohead dt 2 lc rgb "#888888"
set arrow from first 1.5, second 49152/ydiv2 to first 4.5, second 49152/ydiv2 nohead dt 3 lc rgb "#aa0000"
plot in using (column("stages")):(column("piped_over_sync")) with linespoints lw 2 pt 7 ps 1.3 lc rgb "#1b6ac9" title "piped/sync", \
     in using (column("stages")):(column("piped_smem_bytes")/ydiv2) axes x1y2 with linespoints lw 2 pt 5 ps 1.3 lc rgb "#d9541e" title "shared memory per block"
if (exists("values")) {
    set table $rows separator tab
    plot in using (column("stages")):(column("piped_over_sync")):(column("piped_smem_bytes")) with table
    unset table
    set print values
    print "stages\tpiped/sync\tshared memory per block (bytes)"
    print $rows
    unset print
}
