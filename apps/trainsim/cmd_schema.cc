// `trainsim schema`: the input schemas as Markdown (the tables of docs/INPUTS.md) or JSON.
#include <iostream>

#include "cli_util.h"
#include "commands.h"
#include "trainsim/schema.h"

namespace trainsim::cli {

void AddSchema(CLI::App& app, SchemaArgs& a) {
  CLI::App* c =
      app.add_subcommand("schema", "print an input schema (the tables of docs/INPUTS.md)");
  c->add_option("table", a.table, "strategy | strategy-aliases | efficiency")
      ->required()
      ->check(CLI::IsMember({"strategy", "strategy-aliases", "efficiency"}));
  c->add_flag("--markdown", a.markdown, "a Markdown table (default: JSON rows)");
}

int RunSchema(const SchemaArgs& a) {
  if (a.markdown) {
    auto md = SchemaMarkdown(a.table);
    if (!md.ok()) return Fail(md.status());
    std::cout << md.value();
    return 0;
  }
  auto rows = SchemaJson(a.table);
  if (!rows.ok()) return Fail(rows.status());
  std::cout << rows.value().dump(2) << "\n";
  return 0;
}

}  // namespace trainsim::cli
