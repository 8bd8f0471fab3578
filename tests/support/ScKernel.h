#pragma once
// A fresh SystemC kernel for one simulation inside a process that runs several (each test,
// each benchmark iteration). The kernel that existed at program start is never deleted:
// libsystemc's static events point at it and deleting it crashes at exit.

#include <systemc>

namespace etsim::test {

class ScKernel {
public:
    ScKernel() : saved(sc_core::sc_curr_simcontext)
    {
        sc_core::sc_curr_simcontext = new sc_core::sc_simcontext;
        sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
    }
    ~ScKernel()
    {
        delete sc_core::sc_curr_simcontext;
        sc_core::sc_curr_simcontext = saved;
        sc_core::sc_default_global_context = saved;
    }
    ScKernel(const ScKernel&) = delete;
    ScKernel& operator=(const ScKernel&) = delete;

private:
    sc_core::sc_simcontext* saved;
};

} // namespace etsim::test
