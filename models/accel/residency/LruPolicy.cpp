#include "models/accel/residency/LruPolicy.h"

namespace etsim::accel {

void LruPolicy::accessed(std::uint64_t id)
{
    // A use makes the tensor the last to go.
    moveToNewest(id);
}

} // namespace etsim::accel
