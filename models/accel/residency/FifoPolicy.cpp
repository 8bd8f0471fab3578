#include "models/accel/residency/FifoPolicy.h"

namespace etsim::accel {

void FifoPolicy::accessed(std::uint64_t /*id*/)
{
    // Use does not change the order: only placement does.
}

} // namespace etsim::accel
