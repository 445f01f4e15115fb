#include "roofline/device_db.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "roofline/suggest.h"
#include "src/util/embedded_data.h"

namespace roofline {

Result<DeviceDatabase> DeviceDatabase::FromDevices(std::vector<Device> devices) {
  std::sort(devices.begin(), devices.end(),
            [](const Device& a, const Device& b) { return a.id < b.id; });
  for (size_t i = 1; i < devices.size(); ++i) {
    if (devices[i].id == devices[i - 1].id) {
      return Status::Invalid(devices[i].origin, "duplicate device id '" + devices[i].id +
                                                    "' (also in " + devices[i - 1].origin + ")");
    }
  }
  DeviceDatabase db;
  db.devices_ = std::move(devices);
  return db;
}

Result<DeviceDatabase> DeviceDatabase::LoadDirectory(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::Io(dir, "not a directory");
  std::vector<std::string> paths;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") {
      paths.push_back(entry.path().string());
    }
  }
  if (ec) return Status::Io(dir, "cannot list directory: " + ec.message());
  std::sort(paths.begin(), paths.end());
  std::vector<Device> devices;
  for (const auto& p : paths) {
    Result<Device> d = LoadDeviceFile(p);
    if (!d.ok()) return d.status();
    devices.push_back(std::move(d).value());
  }
  return FromDevices(std::move(devices));
}

Result<DeviceDatabase> DeviceDatabase::LoadEmbedded() {
  std::vector<Device> devices;
  for (const auto& f : EmbeddedFiles()) {
    if (f.path.rfind("hardware/", 0) != 0) continue;
    if (f.path.find('/', 9) != std::string_view::npos) continue;  // subfolders (measured/) skipped
    Result<Device> d = ParseDevice(f.content, "<embedded>/data/" + std::string(f.path));
    if (!d.ok()) return d.status();
    devices.push_back(std::move(d).value());
  }
  return FromDevices(std::move(devices));
}

Result<DeviceDatabase> DeviceDatabase::LoadDefault() {
  const char* dir = std::getenv("ROOFLINE_DATA_DIR");
  if (dir != nullptr && *dir != '\0') return LoadDirectory(std::string(dir) + "/hardware");
  return LoadEmbedded();
}

Result<const Device*> DeviceDatabase::Find(const std::string& id) const {
  for (const auto& d : devices_) {
    if (d.id == id) return &d;
  }
  // Ids are lower case: "H100-SXM" is h100-sxm.
  std::string lower = id;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const auto& d : devices_) {
    if (d.id == lower) return &d;
  }
  // Every device whose id starts with the one given ("h100", "H100": both H100s), the default
  // first.
  std::vector<std::string> matches;
  for (const auto& d : devices_) {
    if (!lower.empty() && d.id.rfind(lower, 0) == 0) matches.push_back(d.id);
  }
  std::stable_partition(matches.begin(), matches.end(),
                        [](const std::string& m) { return m == kDefaultDeviceId; });
  std::string hint = DidYouMean(id, ids());
  if (matches.size() > 1) {
    hint = "; did you mean ";
    for (size_t i = 0; i < matches.size(); ++i) {
      hint += (i == 0 ? "'" : (i + 1 == matches.size() ? " or '" : ", '")) + matches[i] + "'" +
              (matches[i] == kDefaultDeviceId ? " (the default)" : "");
    }
    hint += "?";
  }
  return Status::NotFound("--hw", "unknown device '" + id + "'" + hint +
                                      " (see `roofline hw list`, or pass a path to a device JSON)");
}

std::vector<std::string> DeviceDatabase::ids() const {
  std::vector<std::string> out;
  out.reserve(devices_.size());
  for (const auto& d : devices_) out.push_back(d.id);
  return out;
}

Result<Device> ResolveDevice(const std::string& spec, const DeviceDatabase& db) {
  const bool is_path = spec.find('/') != std::string::npos ||
                       (spec.size() > 5 && spec.compare(spec.size() - 5, 5, ".json") == 0);
  if (is_path) return LoadDeviceFile(spec);
  Result<const Device*> d = db.Find(spec);
  if (!d.ok()) return d.status();
  return **d;
}

}  // namespace roofline
