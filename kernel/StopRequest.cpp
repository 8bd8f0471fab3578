#include "kernel/StopRequest.h"

#include <utility>

namespace etsim {

void StopRequest::request(const std::string& reason)
{
    std::lock_guard<std::mutex> guard(lock);
    if (!asked.exchange(true))
        why = reason;
    if (waker)
        waker();
}

std::string StopRequest::reason() const
{
    std::lock_guard<std::mutex> guard(lock);
    return why;
}

void StopRequest::attach(std::function<void()> wake)
{
    std::lock_guard<std::mutex> guard(lock);
    waker = std::move(wake);
}

void StopRequest::detach()
{
    std::lock_guard<std::mutex> guard(lock);
    waker = nullptr;
}

} // namespace etsim
