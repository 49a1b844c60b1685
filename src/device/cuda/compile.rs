//! NVRTC compilation to a CUBIN for the device's own architecture, with a disk cache.
//!
//! The cache lives in `$KSELECT_CACHE_DIR`, else `$XDG_CACHE_HOME/kselect`, else
//! `$HOME/.cache/kselect`; a file is named by the source's hash, the architecture and the NVRTC
//! version, so an edit, another GPU or another NVRTC never reads a stale binary. The cache is
//! best-effort: when it cannot be read or written, the kernel is compiled again.

use std::ffi::{CStr, CString};
use std::path::PathBuf;

use cudarc::nvrtc::sys;

use super::kernels::KernelSource;
use crate::error::{Error, Result};

/// The CUBIN of `source` for `arch` (e.g. `sm_90`), from the disk cache or compiled.
pub(crate) fn cubin(source: &KernelSource, arch: &str) -> Result<Vec<u8>> {
    // SAFETY: only tries to load the shared library.
    if !unsafe { sys::is_culib_present() } {
        return Err(Error::CudaUnavailable(
            "the NVRTC library (libnvrtc.so) is not installed; it compiles kselect's kernels"
                .into(),
        ));
    }
    let program = source.program();
    let version = nvrtc_version()?;
    let cache_file = cache_dir().map(|dir| {
        dir.join(format!(
            "{}-{:016x}-{arch}-nvrtc{}.{}.cubin",
            source.name.trim_end_matches(".cu"),
            fnv1a(program.as_bytes()),
            version.0,
            version.1
        ))
    });
    if let Some(bytes) = cache_file.as_ref().and_then(|f| std::fs::read(f).ok()) {
        return Ok(bytes);
    }
    let bytes = compile(source.name, &program, arch)?;
    if let Some(file) = cache_file {
        store(&file, &bytes);
    }
    Ok(bytes)
}

fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("KSELECT_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(PathBuf::from(dir).join("kselect"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache").join("kselect"))
}

/// Writes the cache file through a temporary name, so readers never see half a file (the
/// name holds the process id and the time, so that writers on several hosts sharing the
/// directory do not meet).
fn store(file: &std::path::Path, bytes: &[u8]) {
    let Some(dir) = file.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let tmp = file.with_extension(format!("tmp{}-{nanos}", std::process::id()));
    if std::fs::write(&tmp, bytes).is_ok() && std::fs::rename(&tmp, file).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// 64-bit FNV-1a: a stable hash for cache names.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn nvrtc_version() -> Result<(i32, i32)> {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two valid out-pointers.
    let status = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    check(status, "nvrtcVersion")?;
    Ok((major, minor))
}

fn check(status: sys::nvrtcResult, what: &str) -> Result<()> {
    if status == sys::nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else {
        Err(Error::Cuda {
            context: what.to_string(),
            message: status_message(status),
        })
    }
}

fn status_message(status: sys::nvrtcResult) -> String {
    // SAFETY: nvrtcGetErrorString returns a static C string for every status.
    let text = unsafe { CStr::from_ptr(sys::nvrtcGetErrorString(status)) };
    text.to_string_lossy().into_owned()
}

/// Owns an NVRTC program and destroys it when dropped.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the program was created by nvrtcCreateProgram and is destroyed once.
        unsafe {
            sys::nvrtcDestroyProgram(&mut self.0);
        }
    }
}

/// Compiles `program` (named `name` in messages) to a CUBIN for `arch`.
pub(super) fn compile(name: &str, program: &str, arch: &str) -> Result<Vec<u8>> {
    let to_c = |s: &str| {
        CString::new(s).map_err(|_| Error::KernelCompile {
            source_name: name.to_string(),
            arch: arch.to_string(),
            message: "the source or its name holds a NUL byte".to_string(),
            log: String::new(),
        })
    };
    let src = to_c(program)?;
    let c_name = to_c(name)?;
    let mut prog: sys::nvrtcProgram = std::ptr::null_mut();
    // SAFETY: valid C strings that outlive the call; no headers.
    let status = unsafe {
        sys::nvrtcCreateProgram(
            &mut prog,
            src.as_ptr(),
            c_name.as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    check(status, "nvrtcCreateProgram")?;
    let prog = Program(prog);
    let options: Vec<CString> = [
        format!("--gpu-architecture={arch}"),
        "--std=c++17".to_string(),
        "-default-device".to_string(),
    ]
    .iter()
    .map(|o| to_c(o))
    .collect::<Result<_>>()?;
    let option_ptrs: Vec<*const std::ffi::c_char> = options.iter().map(|o| o.as_ptr()).collect();
    // SAFETY: `option_ptrs` points at live C strings for the duration of the call.
    let status =
        unsafe { sys::nvrtcCompileProgram(prog.0, option_ptrs.len() as i32, option_ptrs.as_ptr()) };
    if status != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(Error::KernelCompile {
            source_name: name.to_string(),
            arch: arch.to_string(),
            message: status_message(status),
            log: program_log(&prog),
        });
    }
    let mut size = 0usize;
    // SAFETY: valid program and out-pointer.
    check(
        unsafe { sys::nvrtcGetCUBINSize(prog.0, &mut size) },
        "nvrtcGetCUBINSize",
    )?;
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` has the size NVRTC reported.
    check(
        unsafe { sys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr().cast()) },
        "nvrtcGetCUBIN",
    )?;
    Ok(cubin)
}

fn program_log(prog: &Program) -> String {
    let mut size = 0usize;
    // SAFETY: valid program and out-pointer.
    if unsafe { sys::nvrtcGetProgramLogSize(prog.0, &mut size) } != sys::nvrtcResult::NVRTC_SUCCESS
    {
        return String::from("(no log)");
    }
    let mut log = vec![0u8; size.max(1)];
    // SAFETY: `log` has the size NVRTC reported.
    unsafe { sys::nvrtcGetProgramLog(prog.0, log.as_mut_ptr().cast()) };
    String::from_utf8_lossy(&log)
        .trim_end_matches('\0')
        .to_string()
}
