// trainsim-mpi: the search verb sharded over MPI ranks. Every rank evaluates the indices
// i % size == rank (with all its cores), rank 0 gathers and merges; the result equals the
// single-process `trainsim search`. Ranks send their shard as SearchShardJson. Usage: mpirun -np R
// trainsim-mpi search --model ... --gbs ...
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "../trainsim/cli_numbers.h"
#include "../trainsim/cmd_search.h"
#include "trainsim/results_json.h"
#include "trainsim/search.h"

using trainsim::SearchResult;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CLI::App app{"trainsim-mpi: strategy search sharded over MPI ranks"};
  app.require_subcommand(1);
  trainsim::cli::SearchArgs args;
  trainsim::cli::AddSearch(app, args);
  trainsim::cli::RequireDecimalIntegers(app);  // --gpus 010 is an error, not octal 8
  trainsim::cli::RequireFiniteFloats(app);      // --memory-margin nan is an error
  int rc = 0;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (rank == 0) rc = app.exit(e);
    rc = rc == 0 && e.get_exit_code() != 0 ? 2 : rc;
    MPI_Finalize();
    return rc;
  }
  auto sharded = [&](const trainsim::ModelSpec& m, const trainsim::HardwareSpec& hw,
                     const trainsim::SearchOptions& o) -> trainsim::Result<SearchResult> {
    trainsim::SearchOptions mine = o;
    mine.shard = rank;
    mine.shards = size;
    if (rank != 0) mine.progress = nullptr;
    auto r = trainsim::Search(m, hw, mine);
    // Every rank reaches the gather, errors included (an error is sent as an empty string).
    const std::string text = r.ok() ? trainsim::SearchShardJson(r.value()) : std::string();
    int len = static_cast<int>(text.size());
    std::vector<int> lens(size);
    MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<int> offs(size, 0);
    int total = 0;
    for (int i = 0; i < size; ++i) offs[i] = total, total += lens[i];
    std::vector<char> all(rank == 0 ? std::max(total, 1) : 1);
    MPI_Gatherv(text.data(), len, MPI_CHAR, all.data(), lens.data(), offs.data(), MPI_CHAR, 0,
                MPI_COMM_WORLD);
    if (!r.ok()) return r.status();
    if (rank != 0) return r;
    const trainsim::SearchSpace space(m, hw, o);
    std::vector<SearchResult> parts;
    for (int i = 0; i < size; ++i) {
      if (lens[i] == 0)
        return trainsim::Status::Invalid("mpi: rank " + std::to_string(i) + " failed");
      auto p =
          trainsim::ParseSearchShardJson(std::string_view(all.data() + offs[i], lens[i]), space);
      if (!p.ok())
        return trainsim::Status::Invalid("mpi: rank " + std::to_string(i) +
                                         " failed: " + p.status().message());
      parts.push_back(std::move(p).value());
    }
    return trainsim::MergeSearchResults(parts, o.top_k, o.objective);
  };
  rc = trainsim::cli::RunSearch(args, sharded, rank == 0);
  MPI_Finalize();
  return rc;
}
