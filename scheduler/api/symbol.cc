#include "scheduler/api/symbol.h"

#include <deque>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace kubesched::api {
namespace {

// Owner of every interned string. A deque never moves its elements, so views into it stay valid.
class SymbolTable {
 public:
  SymbolTable() { InternLocked(""); }

  Symbol Intern(std::string_view text) {
    {
      absl::ReaderMutexLock lock(&mu_);
      auto it = index_.find(text);
      if (it != index_.end()) return it->second;
    }
    absl::MutexLock lock(&mu_);
    return InternLocked(text);
  }

  Symbol Find(std::string_view text) const {
    absl::ReaderMutexLock lock(&mu_);
    auto it = index_.find(text);
    return it == index_.end() ? kNoSuchSymbol : it->second;
  }

  std::string_view Text(Symbol symbol) const {
    absl::ReaderMutexLock lock(&mu_);
    if (symbol >= texts_.size()) return {};
    return texts_[symbol];
  }

 private:
  Symbol InternLocked(std::string_view text) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = index_.find(text);
    if (it != index_.end()) return it->second;
    texts_.emplace_back(text);
    const auto symbol = static_cast<Symbol>(texts_.size() - 1);
    index_.emplace(std::string_view(texts_.back()), symbol);
    return symbol;
  }

  mutable absl::Mutex mu_;
  std::deque<std::string> texts_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string_view, Symbol> index_ ABSL_GUARDED_BY(mu_);
};

SymbolTable& Table() {
  static auto* table = new SymbolTable();  // never destroyed: views must outlive everything
  return *table;
}

}  // namespace

Symbol Intern(std::string_view text) { return Table().Intern(text); }
Symbol FindSymbol(std::string_view text) { return Table().Find(text); }
std::string_view SymbolText(Symbol symbol) { return Table().Text(symbol); }
std::string_view StableText(std::string_view text) { return SymbolText(Intern(text)); }

}  // namespace kubesched::api
