// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// The loader's promises: it finds bundled vendors by name, loads any vendor by path or linked
// in, and refuses each kind of broken library with a message naming the library, the versions
// involved and every missing piece.
#include <gtest/gtest.h>
#include <torch_backend/loader.h>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct Loaded {
  tb_status status = TB_OK;
  tb_vendor_handle* handle = nullptr;
  std::string error;
  ~Loaded() { tb_loader_close(handle); }
};

void Open(const std::string& name_or_path, Loaded* out) {
  char error[4096] = "";
  out->status = tb_loader_open(name_or_path.c_str(), &out->handle, error, sizeof error);
  out->error = error;
}

std::string BadLib(const std::string& name) {
  return std::string(TB_TEST_VENDOR_DIR) + "/libtb_test_vendor_" + name + ".so";
}

::testing::AssertionResult Contains(const std::string& haystack, const std::string& needle) {
  if (haystack.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\"" << haystack << "\" does not contain \"" << needle << "\"";
}

TEST(Loader, LoadsBundledVendorByName) {
  Loaded fake;
  Open("fake", &fake);
  ASSERT_EQ(fake.status, TB_OK) << fake.error;
  EXPECT_STREQ(fake.handle->device_type, "fake");
  EXPECT_EQ(fake.handle->abi_major, 2u);
  EXPECT_TRUE(Contains(fake.handle->library_path, "/libtb_vendor_fake.so"));
  EXPECT_NE(fake.handle->dl_handle, nullptr);
  char error[1024] = "";
  ASSERT_EQ(tb_loader_init(fake.handle, nullptr, error, sizeof error), TB_OK) << error;
  int32_t count = 0;
  EXPECT_EQ(fake.handle->device.count(fake.handle->context, &count), TB_OK);
  EXPECT_GE(count, 1);
}

TEST(Loader, LoadsLinkedInVendor) {
  tb_vendor_handle* handle = nullptr;
  char error[1024] = "";
  ASSERT_EQ(tb_loader_open_entry(&tb_vendor_get, &handle, error, sizeof error), TB_OK) << error;
  EXPECT_STREQ(handle->device_type, "fake");
  EXPECT_EQ(handle->dl_handle, nullptr);
  EXPECT_TRUE(Contains(handle->library_path, "tb_loader_tests"));
  tb_loader_close(handle);
}

// A vendor's stream workers may still be finishing a destroyed stream's work after close:
// its code must stay mapped (an unmapped worker crashed the process at exit).  Libraries that
// fail validation, which never ran, are unloaded.
TEST(Loader, LoadedVendorStaysMappedAfterClose) {
  std::string path;
  {
    Loaded fake;
    Open("fake", &fake);
    ASSERT_EQ(fake.status, TB_OK) << fake.error;
    path = fake.handle->library_path;
  }
  void* still = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(still, nullptr) << path << " was unmapped by tb_loader_close";
  if (still != nullptr) dlclose(still);

  {
    Loaded bad;
    Open(BadLib("wrong_major"), &bad);
    ASSERT_NE(bad.status, TB_OK);
  }
  void* gone = dlopen(BadLib("wrong_major").c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_EQ(gone, nullptr) << "a library that failed validation stayed loaded";
  if (gone != nullptr) dlclose(gone);
}

TEST(Loader, UnknownNameListsWhatExists) {
  Loaded none;
  Open("nosuchvendor", &none);
  EXPECT_EQ(none.status, TB_ERROR_UNAVAILABLE);
  EXPECT_EQ(none.handle, nullptr);
  EXPECT_TRUE(Contains(none.error, "no bundled vendor named 'nosuchvendor'"));
  EXPECT_TRUE(Contains(none.error, "libtb_vendor_nosuchvendor.so"));
  EXPECT_TRUE(Contains(none.error, "bundled vendors: "));
  EXPECT_TRUE(Contains(none.error, "fake"));
}

TEST(Loader, RejectsMalformedName) {
  Loaded bad;
  Open("Not A Name", &bad);
  EXPECT_EQ(bad.status, TB_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(bad.error, "'Not A Name' is neither a bundled vendor name"));
  char error[256] = "";
  tb_vendor_handle* handle = nullptr;
  EXPECT_EQ(tb_loader_open(nullptr, &handle, error, sizeof error), TB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tb_loader_open("fake", nullptr, error, sizeof error), TB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tb_loader_open_entry(nullptr, &handle, error, sizeof error), TB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(handle, nullptr);
}

TEST(Loader, MissingFileNamesPathAndReason) {
  Loaded missing;
  Open("/nonexistent/dir/libtb_vendor_x.so", &missing);
  EXPECT_EQ(missing.status, TB_ERROR_UNAVAILABLE);
  EXPECT_TRUE(
      Contains(missing.error, "cannot load vendor library '/nonexistent/dir/libtb_vendor_x.so'"));
  EXPECT_TRUE(Contains(missing.error, "No such file"));
}

TEST(Loader, MissingEntryPoint) {
  Loaded bad;
  Open(BadLib("no_entry"), &bad);
  EXPECT_EQ(bad.status, TB_ERROR_UNAVAILABLE);
  EXPECT_TRUE(Contains(bad.error, BadLib("no_entry")));
  EXPECT_TRUE(Contains(bad.error, "does not export the entry point 'tb_vendor_get'"));
}

TEST(Loader, EntryPointReturnsNullWithMessage) {
  Loaded bad;
  Open(BadLib("null_table"), &bad);
  EXPECT_EQ(bad.status, TB_ERROR_UNAVAILABLE);
  EXPECT_TRUE(Contains(bad.error, BadLib("null_table")));
  EXPECT_TRUE(Contains(bad.error, "returned no table for ABI major 2"));
  EXPECT_TRUE(Contains(bad.error, "nor for major 1"));
  EXPECT_TRUE(Contains(bad.error, "license for device type 'acme' expired on 2026-01-01"));
}

TEST(Loader, WrongMajorNamesBothVersions) {
  Loaded bad;
  Open(BadLib("wrong_major"), &bad);
  EXPECT_EQ(bad.status, TB_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(Contains(bad.error, BadLib("wrong_major")));
  EXPECT_TRUE(Contains(bad.error, "implements ABI 3.5"));
  EXPECT_TRUE(Contains(bad.error, "speaks ABI 2." + std::to_string(TB_ABI_VERSION_MINOR) +
                                      " and loads vendors of majors 2 and 1"));
}

TEST(Loader, TableTooSmall) {
  Loaded bad;
  Open(BadLib("table_too_small"), &bad);
  EXPECT_EQ(bad.status, TB_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(Contains(bad.error, BadLib("table_too_small")));
  EXPECT_TRUE(Contains(bad.error, "tb_vendor table is " +
                                      std::to_string(TB_STRUCT_SIZE(tb_vendor, stream)) +
                                      " bytes but ABI 2.0 requires at least " +
                                      std::to_string(TB_VENDOR_V2_0_SIZE)));
}

TEST(Loader, GroupTooSmall) {
  Loaded bad;
  Open(BadLib("group_too_small"), &bad);
  EXPECT_EQ(bad.status, TB_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(Contains(bad.error, "tb_memory_api is " +
                                      std::to_string(TB_STRUCT_SIZE(tb_memory_api, copy_h2d)) +
                                      " bytes but ABI 2.0 requires at least " +
                                      std::to_string(TB_MEMORY_API_V2_0_SIZE)));
}

TEST(Loader, MissingFunctionsAreEachNamed) {
  Loaded bad;
  Open(BadLib("missing_functions"), &bad);
  EXPECT_EQ(bad.status, TB_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(Contains(bad.error, BadLib("missing_functions")));
  EXPECT_TRUE(Contains(bad.error, "(device type 'broken', ABI 2." +
                                      std::to_string(TB_ABI_VERSION_MINOR) +
                                      ") lacks 3 required functions"));
  EXPECT_TRUE(Contains(bad.error, "memory.copy_h2d"));
  EXPECT_TRUE(Contains(bad.error, "stream.query"));
  EXPECT_TRUE(Contains(bad.error, "event.synchronize"));
}

TEST(Loader, ReservedDeviceType) {
  Loaded bad;
  Open(BadLib("reserved_name"), &bad);
  EXPECT_EQ(bad.status, TB_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(Contains(bad.error, "device type 'cuda' is already used by PyTorch"));
}

TEST(Loader, NewerMinorLoadsAndOptionalFunctionsMayBeAbsent) {
  Loaded future;
  Open(BadLib("future_minor"), &future);
  ASSERT_EQ(future.status, TB_OK) << future.error;
  EXPECT_EQ(future.handle->abi_minor, TB_ABI_VERSION_MINOR + 7u);
  EXPECT_STREQ(future.handle->device_type, "future");
  EXPECT_EQ(future.handle->stream.priority_range, nullptr);
  EXPECT_EQ(future.handle->event.elapsed_time, nullptr);
  EXPECT_NE(future.handle->memory.copy_h2d, nullptr);
  ASSERT_EQ(future.handle->kernels.count, 2);
  EXPECT_STREQ(future.handle->kernels.kernels[0]->name, "add.out");
  EXPECT_EQ(future.handle->kernels.kernels[0]->dtypes, TB_DTYPE_BIT(TB_DTYPE_FLOAT32));
}

TEST(Loader, VendorWithoutInitGetsANullContext) {
  Loaded minimal;
  Open(BadLib("no_init"), &minimal);
  ASSERT_EQ(minimal.status, TB_OK) << minimal.error;
  EXPECT_EQ(minimal.handle->init, nullptr);
  EXPECT_EQ(minimal.handle->kernels.count, 0);
  char error[1024] = "";
  ASSERT_EQ(tb_loader_init(minimal.handle, nullptr, error, sizeof error), TB_OK) << error;
  EXPECT_EQ(minimal.handle->context, nullptr);
  int32_t count = 0;
  EXPECT_EQ(minimal.handle->device.count(minimal.handle->context, &count), TB_OK);
  EXPECT_GE(count, 1);
}

template <typename T>
T Symbol(tb_vendor_handle* handle, const char* name) {
  return reinterpret_cast<T>(dlsym(handle->dl_handle, name));
}

// init runs once per handle, its context reaches the handle; finalize runs once, and never in a
// child forked after init.
TEST(Loader, InitOnceFinalizeOnceNotInAForkedChild) {
  Loaded good;
  Open(BadLib("future_minor"), &good);
  ASSERT_EQ(good.status, TB_OK) << good.error;
  auto inits = Symbol<int (*)()>(good.handle, "tb_test_inits");
  auto finalizes = Symbol<int (*)()>(good.handle, "tb_test_finalizes");
  ASSERT_NE(inits, nullptr);
  ASSERT_NE(finalizes, nullptr);
  EXPECT_EQ(good.handle->context, nullptr);  // nothing before init
  char error[1024] = "";
  ASSERT_EQ(tb_loader_init(good.handle, nullptr, error, sizeof error), TB_OK) << error;
  ASSERT_EQ(tb_loader_init(good.handle, nullptr, error, sizeof error), TB_OK) << error;
  EXPECT_EQ(inits(), 1);
  EXPECT_NE(good.handle->context, nullptr);

  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    tb_loader_finalize(good.handle);  // not the child's context to release
    _exit(finalizes());
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "finalize ran in the forked child";

  tb_loader_finalize(good.handle);
  tb_loader_finalize(good.handle);
  EXPECT_EQ(finalizes(), 1);
  EXPECT_EQ(tb_loader_init(good.handle, nullptr, error, sizeof error), TB_ERROR_UNAVAILABLE);
  EXPECT_TRUE(Contains(error, "future: the vendor's context was finalized")) << error;
}

TEST(Loader, InitFailureNamesTheVendorStatusAndMessageAndSticks) {
  Loaded bad;
  Open(BadLib("init_fails"), &bad);
  ASSERT_EQ(bad.status, TB_OK) << bad.error;  // loading is fine; init is what fails
  auto inits = Symbol<int (*)()>(bad.handle, "tb_test_inits");
  auto finalizes = Symbol<int (*)()>(bad.handle, "tb_test_finalizes");
  for (int attempt = 0; attempt < 2; attempt++) {
    char error[1024] = "";
    EXPECT_EQ(tb_loader_init(bad.handle, nullptr, error, sizeof error), TB_ERROR_UNAVAILABLE);
    EXPECT_TRUE(Contains(error,
                         "broken: init failed with TB_ERROR_UNAVAILABLE: broken: no license for "
                         "this machine"))
        << error;
  }
  EXPECT_EQ(inits(), 1);
  tb_loader_finalize(bad.handle);
  EXPECT_EQ(finalizes(), 0);  // no context, nothing to finalize
}

TEST(Loader, DuplicateKernelNames) {
  Loaded bad;
  Open(BadLib("duplicate_kernel"), &bad);
  EXPECT_EQ(bad.status, TB_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(Contains(bad.error, "kernel 2 ('add.out') repeats an earlier name"));
}

TEST(Loader, UnknownKernelFlags) {
  Loaded bad;
  Open(BadLib("kernel_flags"), &bad);
  EXPECT_EQ(bad.status, TB_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(Contains(bad.error,
                       "kernel 1 ('sub.out') sets flags this torch_backend does not "
                       "know"))
      << bad.error;
}

TEST(Loader, SearchPathEnvironmentVariable) {
  Loaded before;
  Open("extra", &before);
  EXPECT_EQ(before.status, TB_ERROR_UNAVAILABLE);
  ASSERT_EQ(setenv(TB_LOADER_PATH_ENV, "/nonexistent:" TB_TEST_EXTRA_DIR, 1), 0);
  Loaded extra;
  Open("extra", &extra);
  char names[512] = "";
  tb_loader_bundled_names(names, sizeof names);
  unsetenv(TB_LOADER_PATH_ENV);
  ASSERT_EQ(extra.status, TB_OK) << extra.error;
  EXPECT_STREQ(extra.handle->device_type, "extra");
  EXPECT_TRUE(Contains(names, "extra"));
  EXPECT_TRUE(Contains(names, "fake"));
}

TEST(Loader, BundledDirHoldsTheLoader) {
  char dir[4096] = "";
  ASSERT_EQ(tb_loader_bundled_dir(dir, sizeof dir), TB_OK);
  std::string fake = std::string(dir) + "/libtb_vendor_fake.so";
  Loaded loaded;
  Open(fake, &loaded);
  EXPECT_EQ(loaded.status, TB_OK) << loaded.error;
  tb_loader_close(nullptr);  // a no-op
}

}  // namespace

// tb_loader_collectives (ABI 2.2): a vendor's collectives extension is found in the chain
// behind other extensions, and one that cannot be used is refused with a message naming what
// is wrong; a vendor without one simply has none.
TEST(Loader, CollectivesExtensionIsFoundAndValidated) {
  tb_vendor table{};
  table.struct_size = sizeof table;
  tb_vendor_handle handle{};
  handle.table = &table;
  handle.abi_major = 2;
  std::snprintf(handle.device_type, sizeof handle.device_type, "acme");
  char error[512] = "x";
  EXPECT_EQ(tb_loader_collectives(&handle, error, sizeof error), nullptr);
  EXPECT_STREQ(error, "");

  tb_collectives_extension coll{};
  coll.base = {sizeof coll, TB_EXTENSION_COLLECTIVES, nullptr};
  coll.get_unique_id = [](tb_context, tb_comm_id*) { return TB_OK; };
  coll.comm_init = [](tb_context, int32_t, int32_t, int32_t, const tb_comm_id*,
                      const tb_comm_config*, tb_comm*) { return TB_OK; };
  coll.comm_destroy = [](tb_context, tb_comm) { return TB_OK; };
  coll.all_reduce = [](tb_context, tb_comm, const void*, void*, size_t, tb_dtype, tb_reduce_op,
                       tb_stream) { return TB_OK; };
  coll.broadcast = [](tb_context, tb_comm, const void*, void*, size_t, tb_dtype, int32_t,
                      tb_stream) { return TB_OK; };
  coll.all_gather = [](tb_context, tb_comm, const void*, void*, size_t, tb_dtype, tb_stream) {
    return TB_OK;
  };
  coll.reduce_scatter = [](tb_context, tb_comm, const void*, void*, size_t, tb_dtype, tb_reduce_op,
                           tb_stream) { return TB_OK; };
  // Behind an extension of a type this build does not know, which is skipped.
  tb_extension_base unknown{sizeof unknown, static_cast<tb_extension_type>(99), &coll.base};
  table.extensions = &unknown;
  EXPECT_EQ(tb_loader_collectives(&handle, error, sizeof error), &coll);
  EXPECT_STREQ(error, "");

  coll.broadcast = nullptr;
  EXPECT_EQ(tb_loader_collectives(&handle, error, sizeof error), nullptr);
  EXPECT_TRUE(Contains(error,
                       "acme: its tb_collectives_extension lacks the required function "
                       "broadcast"));

  coll.base.struct_size = sizeof(tb_extension_base);
  EXPECT_EQ(tb_loader_collectives(&handle, error, sizeof error), nullptr);
  EXPECT_TRUE(Contains(error, "acme: its tb_collectives_extension has struct_size"));

  tb_collectives_extension again = coll;
  again.base.struct_size = sizeof again;
  coll.base.next = &again.base;
  EXPECT_EQ(tb_loader_collectives(&handle, error, sizeof error), nullptr);
  EXPECT_TRUE(Contains(error, "acme: its extension chain holds TB_EXTENSION_COLLECTIVES twice"));
}

// tb_loader_storage_meta (ABI 2.4): found behind other extensions, refused with a message
// naming what is wrong, absent when the vendor has none.
TEST(Loader, StorageMetaExtensionIsFoundAndValidated) {
  tb_vendor table{};
  table.struct_size = sizeof table;
  tb_vendor_handle handle{};
  handle.table = &table;
  handle.abi_major = 2;
  std::snprintf(handle.device_type, sizeof handle.device_type, "acme");
  char error[512] = "x";
  EXPECT_EQ(tb_loader_storage_meta(&handle, error, sizeof error), nullptr);
  EXPECT_STREQ(error, "");

  tb_storage_meta_extension meta{};
  meta.base = {sizeof meta, TB_EXTENSION_STORAGE_META, nullptr};
  meta.names = nullptr;
  meta.set = [](tb_context, int32_t, void*, size_t, const char*, int64_t) { return TB_OK; };
  meta.get = [](tb_context, int32_t, const void*, const char**, int64_t*, int32_t, int32_t* count) {
    *count = 0;
    return TB_OK;
  };
  meta.release = [](tb_context, int32_t, void*) { return TB_OK; };
  tb_extension_base unknown{sizeof unknown, static_cast<tb_extension_type>(99), &meta.base};
  table.extensions = &unknown;
  EXPECT_EQ(tb_loader_storage_meta(&handle, error, sizeof error), &meta);
  EXPECT_STREQ(error, "");

  meta.release = nullptr;
  EXPECT_EQ(tb_loader_storage_meta(&handle, error, sizeof error), nullptr);
  EXPECT_TRUE(
      Contains(error, "acme: its tb_storage_meta_extension lacks the required function release"));

  meta.base.struct_size = sizeof(tb_extension_base);
  EXPECT_EQ(tb_loader_storage_meta(&handle, error, sizeof error), nullptr);
  EXPECT_TRUE(Contains(error, "acme: its tb_storage_meta_extension has struct_size"));
}

// tb_loader_ipc (ABI 2.5): found behind other extensions, refused with a message naming what
// is wrong, absent when the vendor has none.
TEST(Loader, IpcExtensionIsFoundAndValidated) {
  tb_vendor table{};
  table.struct_size = sizeof table;
  tb_vendor_handle handle{};
  handle.table = &table;
  handle.abi_major = 2;
  std::snprintf(handle.device_type, sizeof handle.device_type, "acme");
  char error[512] = "x";
  EXPECT_EQ(tb_loader_ipc(&handle, error, sizeof error), nullptr);
  EXPECT_STREQ(error, "");

  tb_ipc_extension ipc{};
  ipc.base = {sizeof ipc, TB_EXTENSION_IPC, nullptr};
  ipc.export_memory = [](tb_context, int32_t, void*, tb_ipc_handle*) { return TB_OK; };
  ipc.import_memory = [](tb_context, int32_t, const tb_ipc_handle*, void**) { return TB_OK; };
  ipc.close_memory = [](tb_context, int32_t, void*) { return TB_OK; };
  tb_extension_base unknown{sizeof unknown, static_cast<tb_extension_type>(99), &ipc.base};
  table.extensions = &unknown;
  EXPECT_EQ(tb_loader_ipc(&handle, error, sizeof error), &ipc);
  EXPECT_STREQ(error, "");

  ipc.import_memory = nullptr;
  EXPECT_EQ(tb_loader_ipc(&handle, error, sizeof error), nullptr);
  EXPECT_TRUE(
      Contains(error, "acme: its tb_ipc_extension lacks the required function import_memory"));

  ipc.base.struct_size = sizeof(tb_extension_base);
  EXPECT_EQ(tb_loader_ipc(&handle, error, sizeof error), nullptr);
  EXPECT_TRUE(Contains(error, "acme: its tb_ipc_extension has struct_size"));
}

// tb_loader_programs (ABI 2.6): found behind other extensions, refused with a message naming
// what is wrong (a function missing, no language, too small), absent when the vendor has none.
TEST(Loader, ProgramsExtensionIsFoundAndValidated) {
  tb_vendor table{};
  table.struct_size = sizeof table;
  tb_vendor_handle handle{};
  handle.table = &table;
  handle.abi_major = 2;
  std::snprintf(handle.device_type, sizeof handle.device_type, "acme");
  char error[512] = "x";
  EXPECT_EQ(tb_loader_programs(&handle, error, sizeof error), nullptr);
  EXPECT_STREQ(error, "");

  tb_programs_extension programs{};
  programs.base = {sizeof programs, TB_EXTENSION_PROGRAMS, nullptr};
  programs.languages = TB_PROGRAM_LANGUAGE_BIT(TB_PROGRAM_OPENCL_C);
  programs.build = [](tb_context, int32_t, tb_program_language, const char*, size_t, const char*,
                      tb_program*) { return TB_OK; };
  programs.get_kernel = [](tb_context, tb_program, const char*, tb_program_kernel*,
                           tb_program_kernel_info*) { return TB_OK; };
  programs.launch = [](tb_context, tb_stream, tb_program_kernel, const tb_launch_dims*,
                       const void* const*, size_t) { return TB_OK; };
  programs.release = [](tb_context, tb_program) { return TB_OK; };
  tb_extension_base unknown{sizeof unknown, static_cast<tb_extension_type>(99), &programs.base};
  table.extensions = &unknown;
  EXPECT_EQ(tb_loader_programs(&handle, error, sizeof error), &programs);
  EXPECT_STREQ(error, "");

  programs.languages = 0;
  EXPECT_EQ(tb_loader_programs(&handle, error, sizeof error), nullptr);
  EXPECT_TRUE(Contains(error, "acme: its tb_programs_extension declares no language"));
  programs.languages = TB_PROGRAM_LANGUAGE_BIT(TB_PROGRAM_OPENCL_C);

  programs.launch = nullptr;
  EXPECT_EQ(tb_loader_programs(&handle, error, sizeof error), nullptr);
  EXPECT_TRUE(
      Contains(error, "acme: its tb_programs_extension lacks the required function launch"));

  programs.base.struct_size = sizeof(tb_extension_base);
  EXPECT_EQ(tb_loader_programs(&handle, error, sizeof error), nullptr);
  EXPECT_TRUE(Contains(error, "acme: its tb_programs_extension has struct_size"));
}
