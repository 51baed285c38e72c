/* kloop: torch/python.h without Python (kloop_torch_real.h binds the module) */
#pragma once
#include <kloop_torch_real.h>
