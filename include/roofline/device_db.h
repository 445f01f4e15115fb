// The device database: every device file of data/hardware, looked up by id.
#ifndef ROOFLINE_DEVICE_DB_H_
#define ROOFLINE_DEVICE_DB_H_

#include <string>
#include <vector>

#include "roofline/device.h"
#include "roofline/status.h"

namespace roofline {

/// The device every command costs on when no --hw is given.
inline constexpr const char* kDefaultDeviceId = "h100-sxm";

/// A set of devices with unique ids, sorted by id.
class DeviceDatabase {
 public:
  /// Loads every `*.json` directly inside `dir`. Any invalid file is an error.
  static Result<DeviceDatabase> LoadDirectory(const std::string& dir);
  /// The copy of data/hardware compiled into the library at build time.
  static Result<DeviceDatabase> LoadEmbedded();
  /// `$ROOFLINE_DATA_DIR/hardware` when that variable is set, else the embedded copy.
  static Result<DeviceDatabase> LoadDefault();
  /// Builds a database from devices already parsed (ids must be unique).
  static Result<DeviceDatabase> FromDevices(std::vector<Device> devices);

  const std::vector<Device>& devices() const { return devices_; }
  /// The device with this id; NotFound with a "did you mean" otherwise.
  Result<const Device*> Find(const std::string& id) const;
  std::vector<std::string> ids() const;

 private:
  std::vector<Device> devices_;
};

/// `spec` is a database id ("h100-sxm") or a path to a device JSON file (anything containing
/// '/' or ending in ".json"). Used for every `--hw` option.
Result<Device> ResolveDevice(const std::string& spec, const DeviceDatabase& db);

}  // namespace roofline

#endif  // ROOFLINE_DEVICE_DB_H_
