// Which worker this process is: from the launcher (mpirun's environment) and
// XDEV_CONFIG (TF_CONFIG's shape), read before MPI starts.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace xdev::mpi {

struct LaunchInfo {
  bool under_mpirun = false;  // OMPI_COMM_WORLD_SIZE / PMIX_RANK / PMI_SIZE set
  std::string launcher_variable;  // the variable that said so
  // From XDEV_CONFIG, when set: cluster.worker and task.index.
  std::optional<std::vector<std::string>> config_workers;
  int config_task = 0;
};

// Throws xdev::Error(kInvalidArgument) naming XDEV_CONFIG and the fault.
LaunchInfo read_launch_info();

}  // namespace xdev::mpi
