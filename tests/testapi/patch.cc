#include "tests/testapi/patch.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "scheduler/util/strings.h"

namespace kubesched::testapi {
namespace {

using Allocator = rapidjson::Document::AllocatorType;
using util::Absl;

std::string_view View(const rapidjson::Value& string_value) {
  return std::string_view(string_value.GetString(), string_value.GetStringLength());
}

void MergeObjects(const rapidjson::Value& patch, rapidjson::Value* target, Allocator& allocator) {
  for (auto it = patch.MemberBegin(); it != patch.MemberEnd(); ++it) {
    auto existing = target->FindMember(it->name);
    if (it->value.IsNull()) {
      if (existing != target->MemberEnd()) target->EraseMember(existing);
      continue;
    }
    if (it->value.IsObject()) {
      if (existing == target->MemberEnd()) {
        target->AddMember(rapidjson::Value(it->name, allocator),
                          rapidjson::Value(rapidjson::kObjectType), allocator);
        existing = target->FindMember(it->name);
      } else if (!existing->value.IsObject()) {
        existing->value.SetObject();
      }
      MergeObjects(it->value, &existing->value, allocator);
      continue;
    }
    if (existing == target->MemberEnd()) {
      target->AddMember(rapidjson::Value(it->name, allocator),
                        rapidjson::Value(it->value, allocator), allocator);
    } else {
      existing->value.CopyFrom(it->value, allocator);
    }
  }
}

// ---- strategic merge ----

// The patch merge keys of the list fields Kubernetes declares with patchStrategy "merge", by the
// field's path from the object root (list elements do not add a path segment).
std::string_view MergeKeyFor(std::string_view path) {
  static constexpr std::pair<std::string_view, std::string_view> kMergeKeys[] = {
      {"metadata.ownerReferences", "uid"},
      {"spec.containers", "name"},
      {"spec.initContainers", "name"},
      {"spec.ephemeralContainers", "name"},
      {"spec.containers.env", "name"},
      {"spec.initContainers.env", "name"},
      {"spec.containers.ports", "containerPort"},
      {"spec.initContainers.ports", "containerPort"},
      {"spec.containers.volumeMounts", "mountPath"},
      {"spec.initContainers.volumeMounts", "mountPath"},
      {"spec.volumes", "name"},
      {"spec.imagePullSecrets", "name"},
      {"spec.hostAliases", "ip"},
      {"status.conditions", "type"},
      {"status.addresses", "type"},
      {"status.reservedFor", "uid"},  // ResourceClaim's consumers
  };
  for (const auto& [field_path, key] : kMergeKeys) {
    if (field_path == path) return key;
  }
  return {};
}

// Lists of scalars with patchStrategy "merge": the patch's values are added to the target's.
bool IsMergedPrimitiveList(std::string_view path) { return path == "metadata.finalizers"; }

bool IsDirectiveKey(std::string_view key) {
  return key == "$patch" || key == "$retainKeys" || key.starts_with("$setElementOrder/") ||
         key.starts_with("$deleteFromPrimitiveList/");
}

std::string_view PatchDirective(const rapidjson::Value& value) {
  if (!value.IsObject()) return {};
  auto it = value.FindMember("$patch");
  return it != value.MemberEnd() && it->value.IsString() ? View(it->value) : std::string_view();
}

// A deep copy of `value` without strategic-merge directives.
rapidjson::Value StripDirectives(const rapidjson::Value& value, Allocator& allocator) {
  if (value.IsObject()) {
    rapidjson::Value out(rapidjson::kObjectType);
    for (auto it = value.MemberBegin(); it != value.MemberEnd(); ++it) {
      if (IsDirectiveKey(View(it->name))) continue;
      out.AddMember(rapidjson::Value(it->name, allocator), StripDirectives(it->value, allocator),
                    allocator);
    }
    return out;
  }
  if (value.IsArray()) {
    rapidjson::Value out(rapidjson::kArrayType);
    for (const auto& element : value.GetArray()) {
      out.PushBack(StripDirectives(element, allocator), allocator);
    }
    return out;
  }
  return rapidjson::Value(value, allocator);
}

std::string Join(std::string_view path, std::string_view field) {
  return path.empty() ? std::string(field) : absl::StrCat(Absl(path), ".", Absl(field));
}

absl::Status StrategicMergeObject(const rapidjson::Value& patch, rapidjson::Value* target,
                                  std::string_view path, Allocator& allocator);

bool SameMergeKey(const rapidjson::Value& a, const rapidjson::Value& b, std::string_view key) {
  if (!a.IsObject() || !b.IsObject()) return false;
  rapidjson::Value name(rapidjson::StringRef(key.data(), key.size()));
  auto ia = a.FindMember(name);
  auto ib = b.FindMember(name);
  return ia != a.MemberEnd() && ib != b.MemberEnd() && ia->value == ib->value;
}

absl::Status StrategicMergeList(const rapidjson::Value& patch, rapidjson::Value* target,
                                std::string_view path, std::string_view merge_key,
                                Allocator& allocator) {
  if (!target->IsArray()) target->SetArray();
  for (const auto& element : patch.GetArray()) {
    if (!element.IsObject()) {
      return absl::InvalidArgumentError(absl::StrCat("strategic merge patch: elements of ",
                                                     Absl(path), " must be objects keyed by ",
                                                     Absl(merge_key)));
    }
    rapidjson::Value* match = nullptr;
    rapidjson::SizeType match_index = 0;
    for (rapidjson::SizeType i = 0; i < target->Size(); ++i) {
      if (SameMergeKey((*target)[i], element, merge_key)) {
        match = &(*target)[i];
        match_index = i;
        break;
      }
    }
    std::string_view directive = PatchDirective(element);
    if (directive == "delete") {
      if (match != nullptr) target->Erase(target->Begin() + match_index);
    } else if (directive == "replace" || match == nullptr) {
      if (match != nullptr) {
        *match = StripDirectives(element, allocator);
      } else {
        target->PushBack(StripDirectives(element, allocator), allocator);
      }
    } else {
      absl::Status status = StrategicMergeObject(element, match, path, allocator);
      if (!status.ok()) return status;
    }
  }
  return absl::OkStatus();
}

void MergePrimitiveList(const rapidjson::Value& patch, rapidjson::Value* target,
                        Allocator& allocator) {
  if (!target->IsArray()) target->SetArray();
  for (const auto& element : patch.GetArray()) {
    bool present = false;
    for (const auto& existing : target->GetArray()) present = present || existing == element;
    if (!present) target->PushBack(rapidjson::Value(element, allocator), allocator);
  }
}

void DeleteFromPrimitiveList(const rapidjson::Value& values, rapidjson::Value* list) {
  if (!values.IsArray() || !list->IsArray()) return;
  for (const auto& value : values.GetArray()) {
    for (auto it = list->Begin(); it != list->End();) {
      it = *it == value ? list->Erase(it) : it + 1;
    }
  }
}

absl::Status StrategicMergeObject(const rapidjson::Value& patch, rapidjson::Value* target,
                                  std::string_view path, Allocator& allocator) {
  if (PatchDirective(patch) == "replace") {
    *target = StripDirectives(patch, allocator);
    return absl::OkStatus();
  }
  if (!target->IsObject()) target->SetObject();
  if (auto retain = patch.FindMember("$retainKeys");
      retain != patch.MemberEnd() && retain->value.IsArray()) {
    for (auto it = target->MemberBegin(); it != target->MemberEnd();) {
      bool keep = false;
      for (const auto& key : retain->value.GetArray()) keep = keep || key == it->name;
      it = keep ? it + 1 : target->EraseMember(it);
    }
  }
  for (auto it = patch.MemberBegin(); it != patch.MemberEnd(); ++it) {
    std::string_view key = View(it->name);
    if (key.starts_with("$deleteFromPrimitiveList/")) {
      std::string field(key.substr(std::string_view("$deleteFromPrimitiveList/").size()));
      auto list =
          target->FindMember(rapidjson::Value(rapidjson::StringRef(field.data(), field.size())));
      if (list != target->MemberEnd()) DeleteFromPrimitiveList(it->value, &list->value);
      continue;
    }
    if (IsDirectiveKey(key)) continue;
    auto existing = target->FindMember(it->name);
    if (it->value.IsNull() || PatchDirective(it->value) == "delete") {
      if (existing != target->MemberEnd()) target->EraseMember(existing);
      continue;
    }
    if (existing == target->MemberEnd()) {
      target->AddMember(rapidjson::Value(it->name, allocator), rapidjson::Value(), allocator);
      existing = target->FindMember(it->name);
    }
    std::string field_path = Join(path, key);
    if (it->value.IsObject()) {
      absl::Status status =
          StrategicMergeObject(it->value, &existing->value, field_path, allocator);
      if (!status.ok()) return status;
    } else if (it->value.IsArray() && !MergeKeyFor(field_path).empty()) {
      absl::Status status = StrategicMergeList(it->value, &existing->value, field_path,
                                               MergeKeyFor(field_path), allocator);
      if (!status.ok()) return status;
    } else if (it->value.IsArray() && IsMergedPrimitiveList(field_path)) {
      MergePrimitiveList(it->value, &existing->value, allocator);
    } else {
      existing->value = StripDirectives(it->value, allocator);
    }
  }
  return absl::OkStatus();
}

// ---- JSON patch ----

// Decodes a JSON pointer ("/a/b~1c/0") into unescaped tokens.
absl::StatusOr<std::vector<std::string>> PointerTokens(std::string_view pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  if (pointer.front() != '/') {
    return absl::InvalidArgumentError(absl::StrCat("invalid JSON pointer \"", Absl(pointer), "\""));
  }
  std::string current;
  for (size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      tokens.push_back(std::move(current));
      current.clear();
    } else if (pointer[i] == '~' && i + 1 < pointer.size() &&
               (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
      current.push_back(pointer[i + 1] == '0' ? '~' : '/');
      ++i;
    } else {
      current.push_back(pointer[i]);
    }
  }
  return tokens;
}

bool ArrayIndex(const std::string& token, rapidjson::SizeType size, bool allow_end,
                rapidjson::SizeType* index) {
  if (allow_end && token == "-") {
    *index = size;
    return true;
  }
  if (token.empty() || token.size() > 9 ||
      token.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  unsigned long value = std::stoul(token);
  if (value > size || (!allow_end && value == size)) return false;
  *index = static_cast<rapidjson::SizeType>(value);
  return true;
}

rapidjson::Value* Resolve(rapidjson::Value* root, const std::vector<std::string>& tokens,
                          size_t count) {
  rapidjson::Value* current = root;
  for (size_t i = 0; i < count && current != nullptr; ++i) {
    const std::string& token = tokens[i];
    if (current->IsObject()) {
      auto it =
          current->FindMember(rapidjson::Value(rapidjson::StringRef(token.data(), token.size())));
      current = it == current->MemberEnd() ? nullptr : &it->value;
    } else if (current->IsArray()) {
      rapidjson::SizeType index;
      current = ArrayIndex(token, current->Size(), false, &index) ? &(*current)[index] : nullptr;
    } else {
      current = nullptr;
    }
  }
  return current;
}

absl::Status PathError(std::string_view op, std::string_view path) {
  return absl::InvalidArgumentError(absl::StrCat("json patch ", Absl(op), " operation: path \"",
                                                 Absl(path), "\" does not exist"));
}

absl::Status AddAt(rapidjson::Document* doc, const std::vector<std::string>& tokens,
                   rapidjson::Value value, std::string_view path) {
  if (tokens.empty()) {
    static_cast<rapidjson::Value&>(*doc) = std::move(value);
    return absl::OkStatus();
  }
  rapidjson::Value* parent = Resolve(doc, tokens, tokens.size() - 1);
  if (parent == nullptr) return PathError("add", path);
  const std::string& last = tokens.back();
  if (parent->IsObject()) {
    auto it = parent->FindMember(rapidjson::Value(rapidjson::StringRef(last.data(), last.size())));
    if (it != parent->MemberEnd()) {
      it->value = std::move(value);
    } else {
      parent->AddMember(rapidjson::Value(last.c_str(), doc->GetAllocator()), value,
                        doc->GetAllocator());
    }
    return absl::OkStatus();
  }
  rapidjson::SizeType index;
  if (!parent->IsArray() || !ArrayIndex(last, parent->Size(), true, &index)) {
    return PathError("add", path);
  }
  parent->PushBack(rapidjson::Value(), doc->GetAllocator());
  for (rapidjson::SizeType i = parent->Size() - 1; i > index; --i) {
    (*parent)[i] = std::move((*parent)[i - 1]);
  }
  (*parent)[index] = std::move(value);
  return absl::OkStatus();
}

absl::StatusOr<rapidjson::Value> RemoveAt(rapidjson::Document* doc,
                                          const std::vector<std::string>& tokens,
                                          std::string_view path) {
  if (tokens.empty()) return absl::InvalidArgumentError("json patch: cannot remove the root");
  rapidjson::Value* parent = Resolve(doc, tokens, tokens.size() - 1);
  if (parent == nullptr) return PathError("remove", path);
  const std::string& last = tokens.back();
  rapidjson::Value removed;
  if (parent->IsObject()) {
    auto it = parent->FindMember(rapidjson::Value(rapidjson::StringRef(last.data(), last.size())));
    if (it == parent->MemberEnd()) return PathError("remove", path);
    removed = std::move(it->value);
    parent->EraseMember(it);
    return removed;
  }
  rapidjson::SizeType index;
  if (!parent->IsArray() || !ArrayIndex(last, parent->Size(), false, &index)) {
    return PathError("remove", path);
  }
  removed = std::move((*parent)[index]);
  parent->Erase(parent->Begin() + index);
  return removed;
}

absl::Status ApplyOperation(const rapidjson::Value& operation, rapidjson::Document* doc) {
  auto string_member = [&operation](const char* name) -> std::string_view {
    auto it = operation.FindMember(name);
    return it != operation.MemberEnd() && it->value.IsString() ? View(it->value)
                                                               : std::string_view();
  };
  std::string_view op = string_member("op");
  std::string_view path = string_member("path");
  auto tokens = PointerTokens(path);
  if (!tokens.ok()) return tokens.status();
  auto value_it = operation.FindMember("value");
  bool has_value = value_it != operation.MemberEnd();
  Allocator& allocator = doc->GetAllocator();
  if (op == "add" || op == "replace" || op == "test") {
    if (!has_value) {
      return absl::InvalidArgumentError(absl::StrCat("json patch ", Absl(op), ": missing value"));
    }
    if (op == "test") {
      rapidjson::Value* current = Resolve(doc, *tokens, tokens->size());
      if (current == nullptr || !(*current == value_it->value)) {
        return absl::InvalidArgumentError(
            absl::StrCat("json patch test operation failed at \"", Absl(path), "\""));
      }
      return absl::OkStatus();
    }
    if (op == "replace") {
      rapidjson::Value* current = Resolve(doc, *tokens, tokens->size());
      if (current == nullptr) return PathError("replace", path);
      current->CopyFrom(value_it->value, allocator);
      return absl::OkStatus();
    }
    return AddAt(doc, *tokens, rapidjson::Value(value_it->value, allocator), path);
  }
  if (op == "remove") return RemoveAt(doc, *tokens, path).status();
  if (op == "move" || op == "copy") {
    std::string_view from = string_member("from");
    auto from_tokens = PointerTokens(from);
    if (!from_tokens.ok()) return from_tokens.status();
    rapidjson::Value value;
    if (op == "move") {
      auto removed = RemoveAt(doc, *from_tokens, from);
      if (!removed.ok()) return removed.status();
      value = std::move(*removed);
    } else {
      rapidjson::Value* source = Resolve(doc, *from_tokens, from_tokens->size());
      if (source == nullptr) return PathError("copy", from);
      value.CopyFrom(*source, allocator);
    }
    return AddAt(doc, *tokens, std::move(value), path);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("json patch: unknown operation \"", Absl(op), "\""));
}

}  // namespace

void ApplyMergePatch(const rapidjson::Value& patch, rapidjson::Document* target) {
  if (!patch.IsObject()) {
    target->CopyFrom(patch, target->GetAllocator());
    return;
  }
  if (!target->IsObject()) target->SetObject();
  MergeObjects(patch, target, target->GetAllocator());
}

absl::Status ApplyStrategicMergePatch(const rapidjson::Value& patch, rapidjson::Document* target) {
  if (!patch.IsObject()) {
    return absl::InvalidArgumentError("strategic merge patch: the patch must be a JSON object");
  }
  return StrategicMergeObject(patch, target, "", target->GetAllocator());
}

absl::Status ApplyJsonPatch(const rapidjson::Value& operations, rapidjson::Document* target) {
  if (!operations.IsArray()) {
    return absl::InvalidArgumentError("json patch: the patch must be a JSON array of operations");
  }
  for (const auto& operation : operations.GetArray()) {
    if (!operation.IsObject()) {
      return absl::InvalidArgumentError("json patch: each operation must be a JSON object");
    }
    absl::Status status = ApplyOperation(operation, target);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace kubesched::testapi
