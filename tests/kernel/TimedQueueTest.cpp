// TimedQueue (kernel/TimedQueue.h): items come out at their due time, in time order, equal
// times in the order they were put in, including items put while the queue is being drained.

#include "kernel/TimedQueue.h"

#include "tests/support/ScTest.h"

#include <gtest/gtest.h>
#include <systemc>

#include <string>
#include <utility>
#include <vector>

namespace etsim {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;
using test::ScTest;

struct Taker : sc_core::sc_module {
    SC_HAS_PROCESS(Taker);
    explicit Taker(const sc_core::sc_module_name& name) : sc_core::sc_module(name)
    {
        SC_METHOD(take);
        sensitive << queue.event();
        dont_initialize();
    }
    void take()
    {
        while (std::optional<std::string> item = queue.next()) {
            taken.emplace_back(*item, sc_core::sc_time_stamp());
            // An item put while draining, due now, comes out in this same pass.
            if (*item == "b")
                queue.put("b-now", sc_core::SC_ZERO_TIME);
        }
    }
    TimedQueue<std::string> queue{"due"};
    std::vector<std::pair<std::string, sc_time>> taken;
};

TEST_F(ScTest, TimedQueueTakesItemsInTimeOrderAndEqualTimesInArrivalOrder)
{
    Taker taker("taker");
    taker.queue.put("a", sc_time(10, SC_NS));
    taker.queue.put("b", sc_time(5, SC_NS));
    taker.queue.put("c", sc_time(10, SC_NS));
    taker.queue.put("d", sc_core::SC_ZERO_TIME);
    taker.queue.put("e", sc_time(10, SC_NS));
    sc_core::sc_start();
    const std::vector<std::pair<std::string, sc_time>> expected = {
        {"d", sc_time(0, SC_NS)},
        {"b", sc_time(5, SC_NS)},
        {"b-now", sc_time(5, SC_NS)},
        {"a", sc_time(10, SC_NS)},
        {"c", sc_time(10, SC_NS)},
        {"e", sc_time(10, SC_NS)},
    };
    EXPECT_EQ(taker.taken, expected);
    EXPECT_EQ(taker.queue.size(), 0U);
}

} // namespace
} // namespace etsim
