// `xdev-smi --query FIELD,... --format csv[,noheader][,nounits]`, like
// `nvidia-smi --query-gpu`: one row per physical device.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace xdev_smi {

// The fields --query accepts, with what each is.
const std::vector<std::pair<std::string, std::string>>& query_fields();

struct QueryFormat {
  bool header = true;
  bool units = true;
};

// Parses "csv", "csv,noheader", "csv,nounits", ...; throws
// std::invalid_argument naming the bad part.
QueryFormat parse_format(const std::string& format);

// Splits and checks the field list; throws std::invalid_argument naming an
// unknown field and listing the known ones.
std::vector<std::string> parse_fields(const std::string& list);

// Writes the table.
void print_query(const std::vector<std::string>& fields, const QueryFormat& format,
                 std::ostream& out);

}  // namespace xdev_smi
