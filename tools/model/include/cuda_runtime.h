// Stand-in for the CUDA header of this name: see lit_gpu.h.
#include <lit_gpu.h>
