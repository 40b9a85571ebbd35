#include "plugins/node_volume_limits/csi_volume.h"

#include <algorithm>

#include "plugins/helper/volumes.h"
#include "scheduler/api/symbol.h"

namespace kubesched::plugins::volume_limits {
namespace {

constexpr std::string_view kAwsEbsPlugin = "kubernetes.io/aws-ebs";
constexpr std::string_view kGcePdPlugin = "kubernetes.io/gce-pd";
constexpr std::string_view kAwsEbsDriver = "ebs.csi.aws.com";
constexpr std::string_view kGcePdDriver = "pd.csi.storage.gke.io";
// Upstream prefixes the handle of a claim without a PV with a random string so that it never
// equals a real handle; a control character does the same here, and is the same in every run.
constexpr std::string_view kUnboundHandlePrefix =
    "\x1f"
    "unbound-claim-";

// Upstream's KubernetesVolumeIDToEBSVolumeID: "aws://<zone>/vol-..." names vol-...; anything else
// is the ID itself. nullopt for an aws:// name whose path is not a volume ID.
std::optional<std::string_view> EbsVolumeId(std::string_view id) {
  constexpr std::string_view kScheme = "aws://";
  if (!id.starts_with(kScheme)) return id;
  id.remove_prefix(kScheme.size());
  const size_t slash = id.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  id.remove_prefix(slash);
  while (!id.empty() && id.front() == '/') id.remove_prefix(1);
  while (!id.empty() && id.back() == '/') id.remove_suffix(1);
  if (!id.starts_with("vol-") || id.find('/') != std::string_view::npos) return std::nullopt;
  return id;
}

std::optional<CsiVolume> EbsVolume(std::string_view volume_id) {
  const std::optional<std::string_view> id = EbsVolumeId(volume_id);
  if (!id.has_value()) return std::nullopt;
  return CsiVolume{kAwsEbsDriver, Handle(*id), InTreePlugin::kAwsEbs};
}

// The region of a zone "<locale>-<region>-<zone>" ("us-central1" of "us-central1-a"); nullopt
// for a zone of another shape.
std::optional<std::string_view> RegionOfZone(std::string_view zone) {
  if (std::count(zone.begin(), zone.end(), '-') != 2) return std::nullopt;
  return zone.substr(0, zone.rfind('-'));
}

// csi-translation-lib's GCE PD PV translation: the zone label (beta first, then GA) makes the
// handle zonal, several zones ("a__b") make it regional, none leaves the zone UNSPECIFIED.
std::optional<CsiVolume> GcePdVolume(const api::PersistentVolume& pv) {
  static const api::Symbol kBetaZone = api::Intern("failure-domain.beta.kubernetes.io/zone");
  static const api::Symbol kZone = api::Intern("topology.kubernetes.io/zone");
  std::string_view zones;
  if (auto beta = pv.meta.labels.Get(kBetaZone); beta.has_value()) zones = api::SymbolText(*beta);
  if (zones.empty()) {
    if (auto ga = pv.meta.labels.Get(kZone); ga.has_value()) zones = api::SymbolText(*ga);
  }
  const std::string_view pd = pv.gce_pd_name;
  if (zones.empty()) {
    return CsiVolume{kGcePdDriver, Handle("projects/UNSPECIFIED/zones/UNSPECIFIED/disks/", pd),
                     InTreePlugin::kGcePd};
  }
  if (zones.find("__") == std::string_view::npos) {
    return CsiVolume{kGcePdDriver, Handle("projects/UNSPECIFIED/zones/", zones, "/disks/", pd),
                     InTreePlugin::kGcePd};
  }
  std::optional<std::string_view> region;
  bool one_region = true;
  helper::ForEachPart(zones, "__", [&](std::string_view zone) {
    const std::optional<std::string_view> of_zone = RegionOfZone(zone);
    if (!of_zone.has_value() || (region.has_value() && *region != *of_zone)) one_region = false;
    region = of_zone;
  });
  if (!one_region) return std::nullopt;
  return CsiVolume{kGcePdDriver, Handle("projects/UNSPECIFIED/regions/", *region, "/disks/", pd),
                   InTreePlugin::kGcePd};
}

// The claim has no usable PV: it counts under its class's provisioner, translated when in-tree.
std::optional<CsiVolume> ClassVolume(const framework::StorageState& storage,
                                     const api::PersistentVolumeClaim& claim) {
  const std::string_view class_name = helper::ClaimClassName(claim);
  if (class_name.empty()) return std::nullopt;  // immediate binding: bound before it is used
  const api::StorageClass* storage_class = storage.classes.Find(class_name);
  if (storage_class == nullptr) return std::nullopt;
  const Handle handle(kUnboundHandlePrefix, claim.meta.namespace_name, "/", claim.meta.name);
  const std::string_view provisioner = storage_class->provisioner;
  if (provisioner == kAwsEbsPlugin) return CsiVolume{kAwsEbsDriver, handle, InTreePlugin::kAwsEbs};
  if (provisioner == kGcePdPlugin) return CsiVolume{kGcePdDriver, handle, InTreePlugin::kGcePd};
  return CsiVolume{provisioner, handle, InTreePlugin::kNone};
}

}  // namespace

Migration MigrationOf(const api::CsiNode* csi_node) {
  Migration migration;
  if (csi_node == nullptr) return migration;
  const auto it = csi_node->meta.annotations.find(api::kMigratedPluginsAnnotation);
  if (it == csi_node->meta.annotations.end()) return migration;
  helper::ForEachPart(it->second, ",", [&migration](std::string_view plugin) {
    if (plugin == kAwsEbsPlugin) migration.aws_ebs = true;
    if (plugin == kGcePdPlugin) migration.gce_pd = true;
  });
  return migration;
}

int Handle::Compare(const Handle& other) const {
  size_t i = 0, i_at = 0, j = 0, j_at = 0;
  const auto& a = parts_;
  const auto& b = other.parts_;
  while (true) {
    while (i < a.size() && i_at == a[i].size()) ++i, i_at = 0;
    while (j < b.size() && j_at == b[j].size()) ++j, j_at = 0;
    if (i == a.size() || j == b.size()) return (i == a.size() ? 0 : 1) - (j == b.size() ? 0 : 1);
    const size_t n = std::min(a[i].size() - i_at, b[j].size() - j_at);
    if (const int c = a[i].substr(i_at, n).compare(b[j].substr(j_at, n)); c != 0) return c;
    i_at += n;
    j_at += n;
  }
}

bool Handle::empty() const {
  return std::all_of(parts_.begin(), parts_.end(), [](std::string_view p) { return p.empty(); });
}

std::string Handle::ToString() const {
  std::string text;
  for (std::string_view part : parts_) text.append(part);
  return text;
}

std::optional<CsiVolume> ClaimVolume(const framework::StorageState& storage,
                                     const api::PersistentVolumeClaim& claim) {
  if (claim.volume_name.empty()) return ClassVolume(storage, claim);
  const api::PersistentVolume* pv = storage.volumes.Find(claim.volume_name);
  // Deleted, or prebound to a PV not created yet: counted by its class, as upstream.
  if (pv == nullptr) return ClassVolume(storage, claim);
  if (pv->csi.has_value()) return CsiVolume{pv->csi->driver, Handle(pv->csi->volume_handle)};
  if (!pv->aws_ebs_volume_id.empty()) return EbsVolume(pv->aws_ebs_volume_id);
  if (!pv->gce_pd_name.empty()) return GcePdVolume(*pv);
  return std::nullopt;
}

std::optional<CsiVolume> InlineVolume(const api::Volume& volume) {
  if (volume.IsAwsEbs()) return EbsVolume(volume.aws_ebs_volume_id);
  if (volume.IsGcePd()) {
    return CsiVolume{kGcePdDriver,
                     Handle("projects/UNSPECIFIED/zones/UNSPECIFIED/disks/", volume.gce_pd_name),
                     InTreePlugin::kGcePd};
  }
  return std::nullopt;
}

bool ClaimIsForPod(const api::PersistentVolumeClaim& claim, const api::Pod& pod) {
  if (claim.meta.namespace_name != pod.meta.namespace_name) return false;
  return std::any_of(claim.meta.owner_references.begin(), claim.meta.owner_references.end(),
                     [&pod](const api::OwnerReference& owner) {
                       return owner.controller && owner.uid == pod.meta.uid;
                     });
}

}  // namespace kubesched::plugins::volume_limits
