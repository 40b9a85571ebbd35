#pragma once

#include <cstdint>
#include <string_view>

namespace kubesched::api {

// Interned string. Label keys, label values and namespace names are interned when an object is
// decoded, so that selectors and topology lookups in the per-node loop compare integers.
//
// Thread-safe. Symbols are never freed: the set of distinct label strings in a cluster is small
// next to the objects that carry them. Symbol 0 is the empty string.
using Symbol = uint32_t;
inline constexpr Symbol kEmptySymbol = 0;

// Returns the symbol of `text`, creating it on first use.
Symbol Intern(std::string_view text);

// Returns the symbol of `text` if it was interned before, else kNoSuchSymbol. Never inserts: use
// it for look-ups driven by input that must not grow the table.
inline constexpr Symbol kNoSuchSymbol = UINT32_MAX;
Symbol FindSymbol(std::string_view text);

// The text of a symbol. The view stays valid for the life of the process.
std::string_view SymbolText(Symbol symbol);

// Interns `text` and returns a view of it that stays valid for the life of the process. Used for
// scheduling reasons built at run time (e.g. "Insufficient example.com/gpu"), so that a Status
// can carry a view instead of an owned string.
std::string_view StableText(std::string_view text);

}  // namespace kubesched::api
