#pragma once
// A fixture giving each test a fresh SystemC kernel (tests/support/ScKernel.h).

#include "tests/support/ScKernel.h"

#include <gtest/gtest.h>
#include <systemc>

namespace etsim::test {

// Fixture for tests that elaborate modules. The kernel is the first member, so it is built
// first and destroyed last; declare modules inside the test body, after it.
class ScTest : public ::testing::Test {
protected:
    ScKernel kernel;
};

} // namespace etsim::test
