/* ATen/ATen.h - kloop's ATen stand-in (kloop_torch.h) under PyTorch's name */
#ifndef KLOOP_TORCH_H
#include "kloop_torch.h"
#endif
