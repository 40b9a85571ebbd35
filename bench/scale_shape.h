#pragma once

// The cluster shape of the scale workloads (SchedulingBasicShaped5k, SchedulingBasic20k,
// SchedulingBasic50k): nodes in 5 zones and racks of 40, one node in ten a GPU node with a
// NoSchedule taint and nvidia.com/gpu capacity, and pods with two containers, the tolerations
// the API server adds to every pod, and labels. Larger clusters than upstream's 5000 nodes show
// how the cost per node grows with the cluster.

#include <string>

namespace kubesched::bench {

// Node `index` of the shape: zone-(index % 5), rack-(index / 40), every tenth node a GPU node.
std::string ShapedNode(int index);

// A pod of the shape in `namespace_name`; bound to `node_name` (Running) unless it is empty
// (Pending). A pod bound to a GPU node tolerates the GPU taint and asks for one GPU, so that every
// node holds pods of its kind; the pending pods ask for no GPU and do not tolerate the taint.
std::string ShapedPod(const std::string& name, const std::string& namespace_name, int ordinal,
                      const std::string& node_name, bool on_gpu_node);

// Whether node `index` of the shape is a GPU node.
inline bool IsShapedGpuNode(int index) { return index % 10 == 9; }

}  // namespace kubesched::bench
