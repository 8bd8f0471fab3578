// libFuzzer target: the co-simulation wire codec. Any bytes decode to a frame, and its
// payload to a message, or end in one CosimError; never a crash, a hang, a huge allocation
// or another exception. What decodes is encoded again and must decode to the same bytes
// (the codec is exact, PROTOCOL.md section 1).

#include "cosim/wire/Frame.h"
#include "cosim/wire/Messages.h"

#include <cstdlib>
#include <vector>

namespace {

using namespace etsim::cosim;

// Decodes the payload as its type says; re-encodes it and checks the round trip.
void payloadRoundTrip(const Frame& frame)
{
    switch (frame.header.type) {
    case MessageType::Hello: {
        const Hello hello = decodeHello(frame.payload);
        if (encodeHello(decodeHello(encodeHello(hello))) != encodeHello(hello))
            std::abort();
        break;
    }
    case MessageType::Request: {
        const Request request = decodeRequest(frame.payload);
        if (encodeRequest(decodeRequest(encodeRequest(request))) != encodeRequest(request))
            std::abort();
        break;
    }
    case MessageType::Response: {
        const Response response = decodeResponse(frame.payload);
        if (encodeResponse(decodeResponse(encodeResponse(response))) != encodeResponse(response))
            std::abort();
        break;
    }
    case MessageType::Grant:
        if (decodeGrant(encodeGrant(decodeGrant(frame.payload))) != decodeGrant(frame.payload))
            std::abort();
        break;
    default:
        (void)decodeText(frame.payload);
        break;
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    Limits limits;
    limits.maxPayload = 1U << 16;
    try {
        const Frame frame = decodeFrame(data, size, limits, "fuzz");
        if (encodeFrame(frame) != std::vector<std::uint8_t>(data, data + size))
            std::abort(); // the codec must be exact
        payloadRoundTrip(frame);
    } catch (const CosimError&) {
    }
    // The payload decoders alone, on the whole input (they are also reached without a
    // valid header by a peer that trusts its framing).
    const std::vector<std::uint8_t> bytes(data, data + size);
    for (int type = 0; type < 5; ++type) {
        try {
            switch (type) {
            case 0:
                (void)decodeHello(bytes);
                break;
            case 1:
                (void)decodeRequest(bytes);
                break;
            case 2:
                (void)decodeResponse(bytes);
                break;
            case 3:
                (void)decodeGrant(bytes);
                break;
            default:
                (void)decodeText(bytes);
                break;
            }
        } catch (const CosimError&) {
        }
    }
    return 0;
}
