#pragma once

// The objects of the Dynamic Resource Allocation workload (SchedulingDRA): every node publishes its
// GPUs as devices in a ResourceSlice of its own (a pool per node, as GPU drivers publish them), of
// one model per node out of three; one DeviceClass selects the driver's devices; and each measured
// pod claims 1 to 8 GPUs of one model through a ResourceClaimTemplate, whose claim the embedded
// cluster creates as the ResourceClaim controller does.

#include <string>
#include <vector>

namespace kubesched::bench {

// The driver's DeviceClass and the claim templates (one per model and count) in
// `namespace_name`.
std::vector<std::string> DraClassAndTemplates(const std::string& namespace_name);

// The ResourceSlice of node `index` ("node-<index>"): `gpus` devices of the node's model.
std::string DraNodeSlice(int index, int gpus);

// The `spec` fields (after the containers) that make pod `ordinal` claim its GPUs: the model
// cycles through the three, the count through 1..8 independently of the model.
std::string DraPodClaims(int ordinal);

}  // namespace kubesched::bench
