/* kloop: pybind11/stl.h without Python (kloop_torch_real.h binds the module) */
#pragma once
#include <kloop_torch_real.h>
