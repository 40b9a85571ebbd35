#pragma once

// How simulate and explain print their reports: JSON with the documented field names (tools and
// tests rely on them) or aligned tables for people.

#include <string>

#include "scheduler/simulate/simulation.h"

namespace kubesched::scheduler {

std::string SimulationJson(const SimulationReport& report);
std::string SimulationTable(const SimulationReport& report);
std::string ExplainJson(const ExplainReport& report);
std::string ExplainTable(const ExplainReport& report);

}  // namespace kubesched::scheduler
