// Preloaded (`node -r`) before the npm package's launcher so it believes it runs elsewhere:
// PIDX_FAKE_PLATFORM=freebsd-x64 sets process.platform and process.arch, PIDX_FAKE_LIBC=musl
// makes process.report say there is no glibc. The launcher itself is the one npm installed,
// unchanged: the test exercises its real code paths for a machine this CI does not have.
"use strict";
const fake = process.env.PIDX_FAKE_PLATFORM;
if (fake) {
  const [platform, arch] = fake.split("-");
  Object.defineProperty(process, "platform", { value: platform });
  Object.defineProperty(process, "arch", { value: arch });
}
if (process.env.PIDX_FAKE_LIBC === "musl") {
  const real = process.report.getReport.bind(process.report);
  process.report.getReport = (...args) => {
    const r = real(...args);
    delete r.header.glibcVersionRuntime;
    return r;
  };
}
