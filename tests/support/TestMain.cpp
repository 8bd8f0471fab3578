// Entry point of every test binary. libsystemc.so references sc_main, so one must exist
// even though the tests start their own kernels (see ScTest.h).
#include <gtest/gtest.h>
#include <systemc>

int sc_main(int /*argc*/, char** /*argv*/)
{
    return 0;
}

int main(int argc, char** argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
