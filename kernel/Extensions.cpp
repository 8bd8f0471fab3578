#include "kernel/Extensions.h"

#include "kernel/Error.h"

#include <cstdlib>
#include <cxxabi.h>
#include <memory>
#include <sstream>
#include <typeinfo>
#include <utility>

namespace etsim {

namespace {

// "etsim::SomeExtension" rather than the mangled name typeid gives.
std::string typeName(const std::type_info& type)
{
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> demangled(
        abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
    return status == 0 && demangled ? std::string(demangled.get()) : std::string(type.name());
}

} // namespace

EtNodeExtension::EtNodeExtension(EtNodeInfo info) : info(std::move(info)) {}

tlm::tlm_extension_base* EtNodeExtension::clone() const
{
    return new EtNodeExtension(info);
}

void EtNodeExtension::copy_from(const tlm::tlm_extension_base& other)
{
    const auto* source = dynamic_cast<const EtNodeExtension*>(&other);
    if (source == nullptr)
        throw Error("EtNodeExtension::copy_from: the source extension has type " +
                    typeName(typeid(other)) +
                    ", not etsim::EtNodeExtension; copy extensions only between slots of the "
                    "same extension type");
    info = source->info;
}

EtNodeExtension* EtNodeExtension::find(const tlm::tlm_generic_payload& payload)
{
    return payload.get_extension<EtNodeExtension>();
}

EtNodeExtension& EtNodeExtension::get(const tlm::tlm_generic_payload& payload)
{
    EtNodeExtension* extension = find(payload);
    if (extension != nullptr)
        return *extension;
    std::ostringstream message;
    message << "payload ("
            << (payload.is_read()    ? "read"
                : payload.is_write() ? "write"
                                     : "ignore")
            << " at 0x" << std::hex << payload.get_address() << std::dec << ", "
            << payload.get_data_length()
            << " bytes) carries no EtNodeExtension: the initiator must attach one with "
               "set_extension() before sending the payload to a model";
    throw Error(message.str());
}

} // namespace etsim
