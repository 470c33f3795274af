// The placement mode's input from the Alibaba openb lists: the GPU nodes as
// a place::Cluster and the pods as requests. This is the I/O edge of the
// placement library; the packer itself reads nothing.
#ifndef TIDE_PLACE_OPENB_INPUT_H_
#define TIDE_PLACE_OPENB_INPUT_H_

#include <string>
#include <vector>

#include "core/status.h"
#include "place/packer.h"

namespace tide::place {

struct OpenbInput {
  Cluster cluster;                // GPU nodes only; models sorted by name
  std::vector<PodRequest> pods;   // every pod row, CPU-only ones included, in file order
  int cpu_nodes = 0;              // nodes without GPUs, left out
};

// Reads both lists. InvalidArgument (naming file, line and field) on a
// malformed row, or when there are no GPU nodes or no pods; NotFound when a
// file cannot be opened.
Result<OpenbInput> LoadOpenb(const std::string& nodes_path, const std::string& pods_path);

}  // namespace tide::place

#endif  // TIDE_PLACE_OPENB_INPUT_H_
