// Streaming, atomic writer for the Magnetar model file (layout in model_format.h and
// docs/MODEL_FORMAT.md). Offsets are fixed by create(); tensors then arrive in any order, each
// whole or in consecutive parts; commit() fsyncs and renames the temporary file onto the target.
#include "format/model_writer.h"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <system_error>

#include "core/platform.h"
#include "format/model_reader.h"

namespace magnetar::format {

namespace fs = std::filesystem;

namespace {

fs::path utf8_path(const std::string& s) { return fs::path(std::u8string(s.begin(), s.end())); }

const char kZeros[kAlignment] = {};

}  // namespace

namespace {
// Removes the files in `dir` named "<prefix>….tmp-<pid>" (prefix "" matches any name) whose
// process is gone.
int remove_dead_writers_files(const fs::path& dir, const std::u8string& prefix) {
  const std::u8string marker = u8".tmp-";
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::u8string name = it->path().filename().u8string();
    const size_t at = name.rfind(marker);
    if (at == std::u8string::npos || at < prefix.size() || name.compare(0, prefix.size(), prefix) != 0)
      continue;
    if (!prefix.empty() && at != prefix.size()) continue;  // "<path>.tmp-<pid>" exactly
    const std::u8string digits = name.substr(at + marker.size());
    if (digits.empty() || digits.size() > 10 ||
        digits.find_first_not_of(u8"0123456789") != std::u8string::npos)
      continue;
    const long long pid = std::stoll(std::string(digits.begin(), digits.end()));
    if (pid > INT32_MAX || platform::process_alive(static_cast<int>(pid))) continue;
    std::error_code remove_ec;
    if (it->is_regular_file(remove_ec) && fs::remove(it->path(), remove_ec)) ++removed;
  }
  return removed;
}
}  // namespace

int remove_stale_temp_files(const std::string& path) {
  const fs::path target = utf8_path(path);
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  return remove_dead_writers_files(dir, target.filename().u8string());
}

int remove_stale_temp_files_in(const std::string& folder) {
  return remove_dead_writers_files(utf8_path(folder), u8"");
}

struct ModelWriter::Impl {
  std::string final_path;
  std::string temp_path;
  std::ofstream out;
  FileHeader header{};
  std::vector<TensorEntry> entries;
  std::vector<uint64_t> written;  // bytes of each tensor written so far
  bool committed = false;
  bool failed = false;  // an I/O error happened: the file is unusable

  Status io_error(const std::string& what) {
    failed = true;
    return Status::error("writing " + temp_path + ": " + what);
  }
};

ModelWriter::ModelWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ModelWriter::~ModelWriter() {
  if (!impl_ || impl_->committed) return;
  if (impl_->out.is_open()) impl_->out.close();
  std::error_code ec;
  fs::remove(utf8_path(impl_->temp_path), ec);
}

Status ModelWriter::create(const std::string& path, const FileHeader& header,
                           const std::vector<TensorDecl>& tensors,
                           const std::string& tokenizer_bytes, const std::string& chat_template,
                           std::unique_ptr<ModelWriter>* out) {
  out->reset();
  if (tensors.empty()) return Status::error("model writer: no tensors declared");
  auto impl = std::make_unique<Impl>();
  impl->final_path = path;
  impl->temp_path = path + ".tmp-" + std::to_string(platform::process_id());

  // Validate the declarations and build the table.
  std::set<std::string> names;
  const uint64_t table_offset = sizeof(FileHeader);
  const uint64_t tokenizer_offset = table_offset + tensors.size() * sizeof(TensorEntry);
  const uint64_t template_offset = tokenizer_offset + tokenizer_bytes.size();
  const uint64_t data_offset = align_up(template_offset + chat_template.size(), kAlignment);
  uint64_t offset = data_offset;
  for (const TensorDecl& t : tensors) {
    const std::string where = "model writer: tensor \"" + t.name + "\": ";
    if (t.name.empty() || t.name.size() >= static_cast<size_t>(kMaxTensorName))
      return Status::error(where + "name must have 1 to " + std::to_string(kMaxTensorName - 1) +
                           " characters");
    if (!names.insert(t.name).second) return Status::error(where + "declared twice");
    if (!dtype_is_valid(static_cast<uint32_t>(t.dtype))) return Status::error(where + "bad dtype");
    if (t.n_dims != 1 && t.n_dims != 2) return Status::error(where + "n_dims must be 1 or 2");
    if (t.rows == 0 || t.cols == 0 || (t.n_dims == 1 && t.rows != 1))
      return Status::error(where + "bad shape");
    if (!dtype_fits_cols(t.dtype, t.cols))
      return Status::error(where + "quantized rows must be a multiple of " +
                           std::to_string(dtype_layout(t.dtype).block_elements) + " columns");
    TensorEntry e{};
    std::memcpy(e.name, t.name.data(), t.name.size());
    e.dtype = static_cast<uint32_t>(t.dtype);
    e.n_dims = static_cast<uint32_t>(t.n_dims);
    e.shape[0] = t.rows;
    e.shape[1] = t.cols;
    e.offset = offset;
    e.bytes = tensor_bytes(t.dtype, t.rows, t.cols);
    offset = align_up(offset + e.bytes, kAlignment);
    impl->entries.push_back(e);
  }
  impl->written.assign(tensors.size(), 0);

  FileHeader& h = impl->header;
  h = header;
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.version = kVersion;
  h.header_bytes = sizeof(FileHeader);
  h.n_tensors = static_cast<uint32_t>(tensors.size());
  h.reserved0 = h.reserved1 = 0;
  h.tensor_table_offset = table_offset;
  h.tokenizer_offset = tokenizer_offset;
  h.tokenizer_bytes = tokenizer_bytes.size();
  h.template_offset = template_offset;
  h.template_bytes = chat_template.size();
  h.data_offset = data_offset;
  h.file_bytes = offset;
  std::memset(h.reserved, 0, sizeof(h.reserved));

  // The reader's own rules, before a byte is written: a file it would reject is never produced.
  std::vector<uint8_t> prefix(sizeof(FileHeader) + impl->entries.size() * sizeof(TensorEntry));
  std::memcpy(prefix.data(), &h, sizeof(h));
  std::memcpy(prefix.data() + sizeof(h), impl->entries.data(), impl->entries.size() * sizeof(TensorEntry));
  ModelFileView view;
  if (Status s = parse_model_header(prefix.data(), prefix.size(), h.file_bytes, &view); !s)
    return Status::error("refusing to write " + path + ", the reader would reject it: " + s.message());
  MAGNETAR_TRY(platform::check_output_target(path));
  remove_stale_temp_files(path);

  impl->out.open(utf8_path(impl->temp_path), std::ios::binary | std::ios::out | std::ios::trunc);
  if (!impl->out.is_open())
    return Status::error("cannot create " + impl->temp_path +
                         " (is the folder writable and does it exist?)");
  std::unique_ptr<ModelWriter> writer(new ModelWriter(std::move(impl)));
  Impl& w = *writer->impl_;
  w.out.write(reinterpret_cast<const char*>(&h), sizeof(h));
  w.out.write(reinterpret_cast<const char*>(w.entries.data()),
              static_cast<std::streamsize>(w.entries.size() * sizeof(TensorEntry)));
  w.out.write(tokenizer_bytes.data(), static_cast<std::streamsize>(tokenizer_bytes.size()));
  w.out.write(chat_template.data(), static_cast<std::streamsize>(chat_template.size()));
  w.out.write(kZeros, static_cast<std::streamsize>(data_offset - template_offset -
                                                   chat_template.size()));
  if (!w.out) return w.io_error("cannot write the header (disk full?)");
  *out = std::move(writer);
  return Status::ok();
}

Status ModelWriter::write_tensor(size_t index, const void* data, uint64_t bytes) {
  if (index < impl_->entries.size() && bytes != impl_->entries[index].bytes)
    return Status::error("model writer: tensor \"" + std::string(impl_->entries[index].name) +
                         "\" is " + std::to_string(impl_->entries[index].bytes) + " bytes, got " +
                         std::to_string(bytes));
  return write_tensor_part(index, 0, data, bytes);
}

Status ModelWriter::write_tensor_part(size_t index, uint64_t offset, const void* data,
                                      uint64_t bytes) {
  Impl& w = *impl_;
  if (w.failed || w.committed) return Status::error("model writer: write after failure or commit");
  if (index >= w.entries.size())
    return Status::error("model writer: tensor index " + std::to_string(index) + " out of range");
  const TensorEntry& e = w.entries[index];
  const std::string name(e.name);
  if (offset != w.written[index])
    return Status::error("model writer: tensor \"" + name + "\" part at " +
                         std::to_string(offset) + " but " + std::to_string(w.written[index]) +
                         " bytes were written (parts must come in order)");
  if (bytes > e.bytes - offset)
    return Status::error("model writer: tensor \"" + name + "\" overflows its " +
                         std::to_string(e.bytes) + " bytes");
  w.out.seekp(static_cast<std::streamoff>(e.offset + offset));
  w.out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  w.written[index] += bytes;
  if (w.written[index] == e.bytes) {  // complete: zero the padding up to the next tensor
    uint64_t end = e.offset + e.bytes;
    w.out.write(kZeros, static_cast<std::streamsize>(align_up(end, kAlignment) - end));
  }
  if (!w.out) return w.io_error("tensor \"" + name + "\": write failed (disk full?)");
  return Status::ok();
}

Status ModelWriter::commit() {
  Impl& w = *impl_;
  if (w.failed || w.committed) return Status::error("model writer: commit after failure or commit");
  for (size_t i = 0; i < w.entries.size(); ++i)
    if (w.written[i] != w.entries[i].bytes)
      return Status::error("model writer: tensor \"" + std::string(w.entries[i].name) +
                           "\" was not written completely");
  w.out.flush();
  if (!w.out) return w.io_error("flush failed (disk full?)");
  w.out.close();
  if (w.out.fail()) return w.io_error("close failed");
  MAGNETAR_TRY(platform::sync_file(w.temp_path));
  MAGNETAR_TRY(platform::rename_replace(w.temp_path, w.final_path));
  w.committed = true;
  return Status::ok();
}

uint64_t ModelWriter::file_bytes() const { return impl_->header.file_bytes; }

}  // namespace magnetar::format
