#pragma once
// A fresh SystemC kernel per test. The kernel that existed at program start is never
// deleted: libsystemc's static events point at it and deleting it crashes at exit.

#include <gtest/gtest.h>
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

// Fixture for tests that elaborate modules. The kernel is the first member, so it is built
// first and destroyed last; declare modules inside the test body, after it.
class ScTest : public ::testing::Test {
protected:
    ScKernel kernel;
};

} // namespace etsim::test
