#pragma once
// The message of the error an action throws, for tests that compare messages exactly.

#include "kernel/Error.h"

#include <string>

namespace etsim::test {

// Runs `action` and returns what() of the ErrorType it throws, or "(no error)" when it throws
// nothing. Other exception types propagate and fail the test.
template <typename ErrorType = Error, typename Action>
std::string errorOf(Action&& action)
{
    try {
        action();
    } catch (const ErrorType& error) {
        return error.what();
    }
    return "(no error)";
}

} // namespace etsim::test
