// The public atomic-replace labs' arms, beside
// `regionctl export`: ways to publish a whole small file, each timed per
// publish. See publish_bench.cc.
#ifndef REGIONSTORE_BENCH_PUBLISH_BENCH_H_
#define REGIONSTORE_BENCH_PUBLISH_BENCH_H_

#include <string>

namespace regionstore::bench {

// Registers publish/<arm>/<bytes> benchmarks writing under `dir`/publish.
// Returns "" or what went wrong setting up.
std::string RegisterPublish(const std::string& dir);

}  // namespace regionstore::bench

#endif  // REGIONSTORE_BENCH_PUBLISH_BENCH_H_
