# piped/sync and shared memory per block against the pipeline depth, from
# the exercise table (make exercise: stages,piped_over_sync,...).
# gnuplot -e "in='EXERCISE.csv'; out='OUT.svg'; gpu='NVIDIA H200'" stages.gp
set terminal svg size 720,420 dynamic font "sans,13" background "white"
set output out
set datafile separator ","
set key bottom right box opaque
set termoption noenhanced
set xrange [1.5:4.5]
set xtics 1
set xlabel "pipeline stages (STAGES), N = 2048"
set ylabel "piped / sync (median times; below 1: pipeline faster)"
set y2label "static shared memory per block (bytes)"
set y2tics
set ytics nomirror
set yrange [0.85:1.05]
set y2range [0:60000]
set grid ytics lc rgb "#dddddd"
set arrow from 1.5,1 to 4.5,1 nohead dt 2 lc rgb "#888888"
set arrow from first 1.5, second 49152 to first 4.5, second 49152 nohead \
    dt 3 lc rgb "#aa0000"
set label "48 KiB static limit (49152 B)" at first 1.6, second 51500 \
    tc rgb "#aa0000"
set title sprintf("Pipeline depth on %s", gpu)
set style data linespoints
plot in using (column("stages")):(column("piped_over_sync")) lw 2 pt 7 \
       ps 1.3 lc rgb "#1b6ac9" title "piped/sync", \
     in using (column("stages")):(column("piped_smem_bytes")) axes x1y2 \
       lw 2 pt 5 ps 1.3 lc rgb "#d9541e" title "shared memory per block"
