#include "cosim/sync/Handshake.h"

namespace etsim::cosim {

std::string versionText(std::uint8_t major, std::uint8_t minor)
{
    return std::to_string(major) + "." + std::to_string(minor);
}

Frame expectFrame(FrameLink& link,
                  MessageType type,
                  std::chrono::milliseconds timeout,
                  const char* waitingFor)
{
    std::optional<Frame> frame = link.wait(timeout);
    if (!frame)
        throw CosimError("no " + std::string(toString(type)) + " within " +
                         std::to_string(timeout.count()) + " ms while waiting for " + waitingFor);
    if (frame->header.type == MessageType::Error)
        throw CosimError("the peer refused: " + decodeText(frame->payload));
    if (frame->header.type != type)
        throw CosimError("expected " + std::string(toString(type)) + " while waiting for " +
                         waitingFor + ", got " + toString(frame->header.type));
    return std::move(*frame);
}

Hello handshakeAsHost(FrameLink& link,
                      const Hello& ours,
                      const std::string& configText,
                      std::chrono::milliseconds timeout)
{
    Frame hello;
    hello.header.type = MessageType::Hello;
    hello.payload = encodeHello(ours);
    link.send(hello);

    const Frame answer = expectFrame(link, MessageType::Hello, timeout, "the peer's HELLO");
    if (answer.header.major != protocolMajor) {
        const std::string message = "protocol major version mismatch: etsim speaks " +
                                    versionText(protocolMajor, protocolMinor) + ", the peer " +
                                    versionText(answer.header.major, answer.header.minor);
        Frame refusal;
        refusal.header.type = MessageType::Error;
        refusal.payload = encodeText(message);
        try {
            link.send(refusal);
        } catch (const CosimError&) {
            // The peer may already be gone; the mismatch is the error to report.
        }
        throw CosimError(message);
    }
    Hello theirs = decodeHello(answer.payload);
    link.setPeerName(theirs.name);
    if ((theirs.capabilities & capabilityOf(ours.mode)) == 0)
        throw CosimError(std::string("the peer cannot run ") + toString(ours.mode) +
                         " synchronisation (its capabilities: 0x" +
                         [&] {
                             char text[16];
                             std::snprintf(text, sizeof text, "%x", theirs.capabilities);
                             return std::string(text);
                         }() +
                         ")");

    // The peer's HELLO echoes the requested mode and promises no more than was offered.
    if (theirs.mode != ours.mode)
        throw CosimError(std::string("the peer's HELLO echoes ") + toString(theirs.mode) +
                         " synchronisation, but etsim requested " + toString(ours.mode) +
                         " (PROTOCOL.md section 3: the peer echoes the requested sync mode)");
    if (ours.mode == SyncMode::Conservative && theirs.lookaheadPs > ours.lookaheadPs)
        throw CosimError("the peer's HELLO lookahead " + std::to_string(theirs.lookaheadPs) +
                         " ps is above the " + std::to_string(ours.lookaheadPs) +
                         " ps etsim offered (PROTOCOL.md section 3: the lookahead is at most "
                         "the offered one)");
    Frame config;
    config.header.type = MessageType::Config;
    config.payload = encodeText(configText);
    link.send(config);
    expectFrame(link, MessageType::Config, timeout, "the peer to accept CONFIG");
    return theirs;
}

} // namespace etsim::cosim
