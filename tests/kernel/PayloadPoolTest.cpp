#include "kernel/PayloadPool.h"

#include "kernel/Error.h"
#include "kernel/Extensions.h"
#include "tests/support/ScTest.h"

#include <gtest/gtest.h>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace etsim {
namespace {

using sc_core::sc_report_handler;

// The report handler's actions and counts are process-wide, not per kernel: set them for the
// test and put them back afterwards. Warnings are cached instead of printed; errors are
// cached and thrown.
class ReportCapture {
public:
    ReportCapture()
        : savedWarning(
              sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_CACHE_REPORT))
        , savedError(sc_report_handler::set_actions(sc_core::SC_ERROR,
                                                    sc_core::SC_CACHE_REPORT | sc_core::SC_THROW))
    {
        sc_report_handler::initialize();
        sc_report_handler::clear_cached_report();
    }
    ~ReportCapture()
    {
        sc_report_handler::set_actions(sc_core::SC_WARNING, savedWarning);
        sc_report_handler::set_actions(sc_core::SC_ERROR, savedError);
        sc_report_handler::clear_cached_report();
    }
    ReportCapture(const ReportCapture&) = delete;
    ReportCapture& operator=(const ReportCapture&) = delete;

    static int warnings() { return sc_report_handler::get_count(sc_core::SC_WARNING); }
    static std::string lastMessage()
    {
        const sc_core::sc_report* report = sc_report_handler::get_cached_report();
        return report != nullptr ? report->get_msg() : "";
    }
    static std::string lastType()
    {
        const sc_core::sc_report* report = sc_report_handler::get_cached_report();
        return report != nullptr ? report->get_msg_type() : "";
    }

private:
    sc_core::sc_actions savedWarning;
    sc_core::sc_actions savedError;
};

// An extension that counts its destructions, so a test sees it freed exactly once. The
// template parameter gives independent extension slots.
template <int Slot>
// NOLINTNEXTLINE(cppcoreguidelines-virtual-class-destructor): virtual via the dependent base
class CountingExtension final : public tlm::tlm_extension<CountingExtension<Slot>> {
public:
    explicit CountingExtension(int* destroyed) : destroyed(destroyed) {}
    ~CountingExtension() override { ++*destroyed; }
    CountingExtension(const CountingExtension&) = delete;
    CountingExtension& operator=(const CountingExtension&) = delete;

    tlm::tlm_extension_base* clone() const override { return new CountingExtension(destroyed); }
    void copy_from(const tlm::tlm_extension_base& /*other*/) override {}

private:
    int* destroyed;
};

TEST(PayloadPool, ReleasedPayloadIsHandedOutAgain)
{
    PayloadPool pool("pool");
    tlm::tlm_generic_payload& first = pool.acquire();
    EXPECT_TRUE(first.has_mm());
    EXPECT_EQ(first.get_ref_count(), 1);
    first.release();
    EXPECT_EQ(pool.inUse(), 0U);
    tlm::tlm_generic_payload& second = pool.acquire();
    EXPECT_EQ(&second, &first);
    EXPECT_EQ(second.get_ref_count(), 1);
    second.release();
    EXPECT_EQ(pool.stats().created, 1U);
    EXPECT_EQ(pool.stats().acquired, 2U);
    EXPECT_EQ(pool.name(), "pool");
}

TEST(PayloadPool, PayloadReturnsOnlyAfterLastReference)
{
    PayloadPool pool("pool");
    tlm::tlm_generic_payload& payload = pool.acquire();
    payload.acquire(); // a second holder, e.g. a target's PEQ
    payload.release(); // the initiator is done
    EXPECT_EQ(pool.inUse(), 1U);
    tlm::tlm_generic_payload& other = pool.acquire();
    EXPECT_NE(&other, &payload) << "a referenced payload must not be handed out again";
    payload.release(); // the second holder is done
    other.release();
    EXPECT_EQ(pool.inUse(), 0U);
    EXPECT_EQ(pool.stats().created, 2U);
    EXPECT_EQ(pool.stats().peakInUse, 2U);
}

TEST(PayloadPool, EveryPayloadHasADenseNumberThatStaysWithIt)
{
    PayloadPool pool("pool");
    tlm::tlm_generic_payload& first = pool.acquire();
    tlm::tlm_generic_payload& buffered = pool.acquire(64);
    tlm::tlm_generic_payload& third = pool.acquire();
    EXPECT_EQ(pool.indexOf(first), 0U);
    EXPECT_EQ(pool.indexOf(buffered), 1U);
    EXPECT_EQ(pool.indexOf(third), 2U);
    first.release();
    tlm::tlm_generic_payload& again = pool.acquire();
    ASSERT_EQ(&again, &first);
    EXPECT_EQ(pool.indexOf(again), 0U) << "a reused payload keeps its number";
    again.release();
    buffered.release();
    third.release();

    PayloadPool other("other");
    tlm::tlm_generic_payload& foreign = other.acquire();
    tlm::tlm_generic_payload plain;
    try {
        (void)pool.indexOf(foreign);
        ADD_FAILURE() << "a payload of another pool has no number here";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("payload pool 'pool'"), std::string::npos);
    }
    EXPECT_THROW((void)pool.indexOf(plain), Error);
    foreign.release();
}

TEST(PayloadPool, DataBuffersAreKeyedByLength)
{
    PayloadPool pool("pool");
    tlm::tlm_generic_payload& small = pool.acquire(64);
    tlm::tlm_generic_payload& large = pool.acquire(4096);
    tlm::tlm_generic_payload& bare = pool.acquire();
    ASSERT_NE(small.get_data_ptr(), nullptr);
    EXPECT_EQ(small.get_data_length(), 64U);
    EXPECT_EQ(small.get_streaming_width(), 64U);
    EXPECT_EQ(large.get_data_length(), 4096U);
    EXPECT_EQ(bare.get_data_ptr(), nullptr);
    EXPECT_EQ(bare.get_data_length(), 0U);
    for (unsigned i = 0; i < 64; ++i)
        EXPECT_EQ(small.get_data_ptr()[i], 0) << "a new buffer starts zeroed";
    unsigned char* smallBuffer = small.get_data_ptr();
    unsigned char* largeBuffer = large.get_data_ptr();
    small.release();
    large.release();
    bare.release();

    // Each length comes back from its own free list, with its own buffer.
    tlm::tlm_generic_payload& again4096 = pool.acquire(4096);
    tlm::tlm_generic_payload& again64 = pool.acquire(64);
    EXPECT_EQ(&again4096, &large);
    EXPECT_EQ(again4096.get_data_ptr(), largeBuffer);
    EXPECT_EQ(&again64, &small);
    EXPECT_EQ(again64.get_data_ptr(), smallBuffer);
    // A length with no free payload creates one even though another length has some free.
    tlm::tlm_generic_payload& other = pool.acquire(128);
    EXPECT_NE(&other, &bare);
    EXPECT_EQ(other.get_data_length(), 128U);
    again4096.release();
    again64.release();
    other.release();

    EXPECT_EQ(pool.stats().created, 4U);
    EXPECT_EQ(pool.stats().bufferBytes, 64U + 4096U + 128U);
    EXPECT_EQ(pool.stats().acquired, 6U);
    EXPECT_EQ(pool.stats().peakInUse, 3U);
}

TEST(PayloadPool, ReturnedPayloadHasFreshFields)
{
    PayloadPool pool("pool");
    tlm::tlm_generic_payload& payload = pool.acquire(16);
    unsigned char* buffer = payload.get_data_ptr();
    std::array<unsigned char, 8> userData{};
    std::array<unsigned char, 8> enables{};
    payload.set_command(tlm::TLM_WRITE_COMMAND);
    payload.set_address(0xdead0000);
    payload.set_data_ptr(userData.data());
    payload.set_data_length(8);
    payload.set_streaming_width(4);
    payload.set_byte_enable_ptr(enables.data());
    payload.set_byte_enable_length(8);
    payload.set_dmi_allowed(true);
    payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    payload.set_gp_option(tlm::TLM_FULL_PAYLOAD);
    payload.release();

    tlm::tlm_generic_payload& reused = pool.acquire(16);
    ASSERT_EQ(&reused, &payload);
    EXPECT_EQ(reused.get_command(), tlm::TLM_IGNORE_COMMAND);
    EXPECT_EQ(reused.get_address(), 0U);
    EXPECT_EQ(reused.get_data_ptr(), buffer) << "the pool's own buffer comes back";
    EXPECT_EQ(reused.get_data_length(), 16U);
    EXPECT_EQ(reused.get_streaming_width(), 16U);
    EXPECT_EQ(reused.get_byte_enable_ptr(), nullptr);
    EXPECT_EQ(reused.get_byte_enable_length(), 0U);
    EXPECT_FALSE(reused.is_dmi_allowed());
    EXPECT_EQ(reused.get_response_status(), tlm::TLM_INCOMPLETE_RESPONSE);
    EXPECT_EQ(reused.get_gp_option(), tlm::TLM_MIN_PAYLOAD);
    reused.release();
}

TEST(PayloadPool, ReusedPayloadCarriesNoStaleExtension)
{
    PayloadPool pool("pool");
    int plainFreed = 0;
    int autoFreed = 0;
    int releasedFreed = 0;
    tlm::tlm_generic_payload& payload = pool.acquire(32);
    EtNodeInfo info;
    info.node = NodeId{42};
    payload.set_extension(new EtNodeExtension(info));
    payload.set_extension(new CountingExtension<0>(&plainFreed));
    payload.set_auto_extension(new CountingExtension<1>(&autoFreed));
    payload.set_extension(new CountingExtension<2>(&releasedFreed));
    payload.release_extension<CountingExtension<2>>(); // deferred to the payload's return
    EXPECT_EQ(releasedFreed, 0);
    payload.release();
    EXPECT_EQ(plainFreed, 1);
    EXPECT_EQ(autoFreed, 1);
    EXPECT_EQ(releasedFreed, 1);

    tlm::tlm_generic_payload& reused = pool.acquire(32);
    ASSERT_EQ(&reused, &payload);
    EXPECT_EQ(EtNodeExtension::find(reused), nullptr);
    EXPECT_EQ(reused.get_extension<CountingExtension<0>>(), nullptr);
    EXPECT_EQ(reused.get_extension<CountingExtension<1>>(), nullptr);
    EXPECT_EQ(reused.get_extension<CountingExtension<2>>(), nullptr);
    // A second round frees the new extension once, and nothing twice.
    reused.set_auto_extension(new CountingExtension<1>(&autoFreed));
    reused.release();
    EXPECT_EQ(plainFreed, 1);
    EXPECT_EQ(autoFreed, 2);
    EXPECT_EQ(releasedFreed, 1);
}

TEST(PayloadPool, SteadyStateCreatesNoPayloads)
{
    PayloadPool pool("pool");
    constexpr int window = 8;
    constexpr int rounds = 10000;
    std::vector<tlm::tlm_generic_payload*> inFlight;
    inFlight.reserve(window);
    auto round = [&] {
        for (int i = 0; i < window; ++i)
            inFlight.push_back(&pool.acquire(i % 2 == 0 ? 64 : 0));
        for (auto* payload : inFlight)
            payload->release();
        inFlight.clear();
    };
    round(); // warm-up: creates one payload per slot of the window
    EXPECT_EQ(pool.stats().created, static_cast<std::uint64_t>(window));
    for (int i = 1; i < rounds; ++i)
        round();
    EXPECT_EQ(pool.stats().created, static_cast<std::uint64_t>(window));
    EXPECT_EQ(pool.stats().bufferBytes, window / 2 * 64U);
    EXPECT_EQ(pool.stats().acquired, static_cast<std::uint64_t>(window) * rounds);
    EXPECT_EQ(pool.stats().peakInUse, static_cast<std::uint64_t>(window));
    EXPECT_EQ(pool.stats().inUse, 0U);
}

TEST(PayloadPool, CheckReportsPayloadsStillInUse)
{
    ReportCapture reports;
    PayloadPool pool("top.cpu0.pool");
    tlm::tlm_generic_payload& kept1 = pool.acquire(8);
    tlm::tlm_generic_payload& kept2 = pool.acquire();
    pool.acquire().release();
    EXPECT_EQ(pool.check(), 2U);
    EXPECT_EQ(ReportCapture::warnings(), 1);
    EXPECT_EQ(ReportCapture::lastType(), PayloadPool::reportType);
    EXPECT_EQ(ReportCapture::lastMessage(),
              "payload pool 'top.cpu0.pool': 2 payload(s) still in use at 0 s (acquired 3 in "
              "total); every acquire() needs a matching release()");

    kept1.release();
    kept2.release();
    EXPECT_EQ(pool.check(), 0U);
    EXPECT_EQ(ReportCapture::warnings(), 1) << "a clean check is silent";
}

TEST(PayloadPool, DestructorReportsLeakAndLeavesPayloadsUsable)
{
    ReportCapture reports;
    auto pool = std::make_unique<PayloadPool>("leaky");
    int freed = 0;
    tlm::tlm_generic_payload& withData = pool->acquire(16);
    tlm::tlm_generic_payload& withExtension = pool->acquire();
    withExtension.set_extension(new CountingExtension<0>(&freed));
    pool->acquire(16).release(); // a pooled one, deleted with the pool
    pool.reset();

    EXPECT_EQ(ReportCapture::warnings(), 1);
    EXPECT_EQ(ReportCapture::lastMessage(),
              "payload pool 'leaky' destroyed with 2 payload(s) still in use; every acquire() "
              "needs a matching release() (call check() at end_of_simulation to find leaks "
              "earlier)");
    // Holders may still use the payloads and release them; the last release deletes them
    // (run under AddressSanitizer, this also proves no use after free and no leak).
    withData.get_data_ptr()[15] = 7;
    EXPECT_EQ(withData.get_data_length(), 16U);
    withData.acquire();
    withData.release();
    // NOLINTNEXTLINE(clang-analyzer-unix.Malloc): the analyzer ignores the reference count
    withData.release();
    withExtension.release();
    EXPECT_EQ(freed, 1);
}

TEST(PayloadPool, DestructorDoesNotRepeatWhatCheckReported)
{
    ReportCapture reports;
    auto pool = std::make_unique<PayloadPool>("pool");
    tlm::tlm_generic_payload& kept = pool->acquire();
    EXPECT_EQ(pool->check(), 1U);
    pool.reset();
    EXPECT_EQ(ReportCapture::warnings(), 1);
    kept.release();
}

TEST(PayloadPool, DestructorSurvivesThrowingWarnings)
{
    ReportCapture reports;
    sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_THROW);
    auto pool = std::make_unique<PayloadPool>("pool");
    tlm::tlm_generic_payload& kept = pool->acquire();
    EXPECT_NO_THROW(pool.reset());
    kept.release();
}

// Runs `action` and returns the message of the SC_REPORT_ERROR it raises.
template <typename Action>
std::string errorOf(Action action)
{
    try {
        action();
    } catch (const sc_core::sc_report& report) {
        EXPECT_STREQ(report.get_msg_type(), PayloadPool::reportType);
        return report.get_msg();
    }
    ADD_FAILURE() << "expected an SC_REPORT_ERROR";
    return "";
}

TEST(PayloadPool, MisuseOfFreeIsReported)
{
    ReportCapture reports;
    PayloadPool pool("p");
    PayloadPool otherPool("q");
    tlm::tlm_generic_payload foreign;
    tlm::tlm_generic_payload& fromOther = otherPool.acquire();
    tlm::tlm_generic_payload& held = pool.acquire();
    tlm::tlm_generic_payload& returned = pool.acquire();
    returned.release();

    const std::string notOurs = "payload pool 'p': free() of a payload this pool did not hand "
                                "out; a payload must return to the pool whose acquire() created "
                                "it";
    // NOLINTNEXTLINE(clang-analyzer-unix.Malloc): tlm_mm_interface::free, not libc's free
    EXPECT_EQ(errorOf([&] { pool.free(&foreign); }), notOurs);
    EXPECT_EQ(errorOf([&] { pool.free(&fromOther); }), notOurs);
    EXPECT_EQ(errorOf([&] { pool.free(nullptr); }), notOurs);
    EXPECT_EQ(errorOf([&] { pool.free(&held); }),
              "payload pool 'p': free() of a payload that is still referenced (reference count "
              "1); return payloads only through release()");
    EXPECT_EQ(errorOf([&] { pool.free(&returned); }),
              "payload pool 'p': free() of a payload that is already back in the pool; return "
              "payloads only through release()");
    EXPECT_EQ(pool.inUse(), 1U);
    EXPECT_EQ(&pool.acquire(), &returned) << "the free list is intact";
    EXPECT_EQ(pool.inUse(), 2U);
    returned.release();
    held.release();
    fromOther.release();
}

// A small SystemC run: an initiator sends transactions one at a time through b_transport,
// each carrying an EtNodeExtension; the target checks and counts them.
class Initiator : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(Initiator);
    tlm_utils::simple_initiator_socket<Initiator> socket{"socket"};

    Initiator(const sc_core::sc_module_name& name, int transactions, bool leakLast)
        : sc_core::sc_module(name)
        , pool(std::string(this->name()) + ".pool")
        , transactions(transactions)
        , leakLast(leakLast)
    {
        SC_THREAD(run);
    }

    PayloadPool pool;
    std::uint64_t leaksAtEnd = 0;
    int failedResponses = 0;
    tlm::tlm_generic_payload* leaked = nullptr;

private:
    void run()
    {
        for (int i = 0; i < transactions; ++i) {
            tlm::tlm_generic_payload& payload = pool.acquire(64);
            payload.set_command(tlm::TLM_WRITE_COMMAND);
            payload.set_address(static_cast<std::uint64_t>(i) * 64);
            payload.get_data_ptr()[0] = static_cast<unsigned char>(i);
            EtNodeInfo info;
            info.rank = RankId{1};
            info.node = NodeId{static_cast<std::uint64_t>(i)};
            info.kind = NodeKind::MemStore;
            info.bytes = 64;
            payload.set_extension(new EtNodeExtension(info));
            sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
            socket->b_transport(payload, delay);
            wait(delay);
            if (payload.get_response_status() != tlm::TLM_OK_RESPONSE)
                ++failedResponses;
            if (leakLast && i == transactions - 1)
                leaked = &payload;
            else
                payload.release();
        }
        sc_core::sc_stop();
    }

    void end_of_simulation() override { leaksAtEnd = pool.check(); }

    int transactions;
    bool leakLast;
};

class Target : public sc_core::sc_module {
public:
    tlm_utils::simple_target_socket<Target> socket{"socket"};

    explicit Target(const sc_core::sc_module_name& name) : sc_core::sc_module(name)
    {
        socket.register_b_transport(this, &Target::transport);
    }

    int received = 0;
    int mismatches = 0;
    std::uint64_t bytes = 0;

private:
    void transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay)
    {
        const EtNodeInfo& info = EtNodeExtension::get(payload).info;
        // The extension and data must belong to this transaction, not an earlier one.
        if (info.node != NodeId{static_cast<std::uint64_t>(received)} ||
            payload.get_address() != toUnderlying(info.node) * 64 ||
            payload.get_data_ptr()[0] != static_cast<unsigned char>(received) ||
            info.rank != RankId{1} || info.kind != NodeKind::MemStore)
            ++mismatches;
        ++received;
        bytes += info.bytes;
        delay += sc_core::sc_time(10, sc_core::SC_NS);
        payload.set_response_status(tlm::TLM_OK_RESPONSE);
    }
};

class PayloadPoolRun : public test::ScTest {};

TEST_F(PayloadPoolRun, ThousandTransactionsReuseOnePayload)
{
    ReportCapture reports;
    Initiator initiator("initiator", 1000, false);
    Target target("target");
    initiator.socket.bind(target.socket);
    sc_core::sc_start();

    EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::sc_time(10, sc_core::SC_US));
    EXPECT_EQ(target.received, 1000);
    EXPECT_EQ(target.mismatches, 0);
    EXPECT_EQ(target.bytes, 64000U);
    EXPECT_EQ(initiator.failedResponses, 0);
    const PayloadPoolStats& stats = initiator.pool.stats();
    EXPECT_EQ(stats.created, 1U) << "one transaction in flight needs one payload";
    EXPECT_EQ(stats.acquired, 1000U);
    EXPECT_EQ(stats.peakInUse, 1U);
    EXPECT_EQ(stats.inUse, 0U);
    EXPECT_EQ(initiator.leaksAtEnd, 0U);
    EXPECT_EQ(ReportCapture::warnings(), 0);
}

TEST_F(PayloadPoolRun, EndOfSimulationCheckFindsForgottenRelease)
{
    ReportCapture reports;
    Initiator initiator("initiator", 5, true);
    Target target("target");
    initiator.socket.bind(target.socket);
    sc_core::sc_start();

    EXPECT_EQ(initiator.leaksAtEnd, 1U);
    EXPECT_EQ(ReportCapture::warnings(), 1);
    EXPECT_EQ(ReportCapture::lastMessage(),
              "payload pool 'initiator.pool': 1 payload(s) still in use at 50 ns (acquired 5 in "
              "total); every acquire() needs a matching release()");
    EXPECT_EQ(initiator.pool.stats().created, 1U);
    ASSERT_NE(initiator.leaked, nullptr);
    initiator.leaked->release();
    EXPECT_EQ(initiator.pool.inUse(), 0U);
}

TEST(HeldPayloads, ReleaseGivesBackWhatHoldTookAndNothingElse)
{
    PayloadPool pool("held");
    tlm::tlm_generic_payload& payload = pool.acquire();
    HeldPayloads held;
    held.hold(payload);
    EXPECT_EQ(held.size(), 1U);
    EXPECT_EQ(payload.get_ref_count(), 2);
    payload.release(); // the initiator is done; the target still works on it
    EXPECT_EQ(pool.inUse(), 1U);
    held.release(payload);
    EXPECT_EQ(held.size(), 0U);
    EXPECT_EQ(pool.inUse(), 0U);

    // A payload not held here keeps its references.
    tlm::tlm_generic_payload& other = pool.acquire();
    held.release(other);
    EXPECT_EQ(other.get_ref_count(), 1);
    other.release();
    EXPECT_EQ(pool.inUse(), 0U);
}

TEST(HeldPayloads, DestructorGivesBackEveryReferenceStillHeld)
{
    PayloadPool pool("held");
    tlm::tlm_generic_payload& once = pool.acquire();
    tlm::tlm_generic_payload& twice = pool.acquire(8);
    {
        HeldPayloads held;
        held.hold(once);
        held.hold(twice);
        held.hold(twice); // it came back in a second transaction
        EXPECT_EQ(held.size(), 3U);
        EXPECT_EQ(twice.get_ref_count(), 3);
        once.release();
        twice.release();
        EXPECT_EQ(pool.inUse(), 2U) << "the holder still has both";
    }
    EXPECT_EQ(pool.inUse(), 0U);
    EXPECT_EQ(pool.stats().acquired, 2U);
}

TEST(HeldPayloads, PayloadsWithoutMemoryManagerAreNotCounted)
{
    tlm::tlm_generic_payload plain;
    HeldPayloads held;
    held.hold(plain);
    EXPECT_EQ(held.size(), 0U);
    EXPECT_EQ(plain.get_ref_count(), 0);
    held.release(plain);
    EXPECT_EQ(plain.get_ref_count(), 0);
}

TEST(HeldPayloads, ReleaseAllEmptiesTheHolderOnce)
{
    PayloadPool pool("held");
    tlm::tlm_generic_payload& payload = pool.acquire();
    HeldPayloads held;
    held.hold(payload);
    payload.release();
    held.releaseAll();
    EXPECT_EQ(held.size(), 0U);
    EXPECT_EQ(pool.inUse(), 0U);
    held.releaseAll(); // nothing left: must not release again
    EXPECT_EQ(pool.inUse(), 0U);
}

} // namespace
} // namespace etsim
