//! [`launchers!`]: a typed, checked Rust function for each kernel; [`device_state!`], the
//! `#[repr(C)]` structs the kernels share with the host; [`OrNull`], device memory or
//! the null pointer for kernel parameters that may be null, and [`NullPtr`], the null pointer
//! alone for launchers that always leave such a parameter out.

use cudarc::driver::{CudaSlice, CudaViewMut, DeviceRepr, LaunchArgs, PushKernelArg};

/// Declares one launcher per kernel:
///
/// ```text
/// launchers! {
///     /// What the kernel does.
///     fn rsel_init(state: dev &mut CudaSlice<SelState>, hist: dev &mut CudaSlice<u64>,
///                  k: val u64, n: val u64, cap: val u64)
///         from RADIX_SELECT as "rsel_init"
///         requires state.len() >= 1, hist.len() >= 256;
/// }
/// ```
///
/// expands to `pub(crate) fn rsel_init(dev: &CudaDevice, shape: LaunchConfig, state: ..., ...)
/// -> Result<()>`. Parameters marked `dev` are device memory, passed by pointer; `val` ones are
/// scalars, passed by value. Generic launchers name their parameters in brackets after the
/// name (`fn rsel_pass[T: Element](...)`) and build the kernel's name from them (`as
/// kernel_name("rsel_pass", T::DTYPE)`). Every `requires` condition is checked before the
/// launch; a false one is an error naming it, and nothing is launched. Conditions on the launch
/// shape name it first: `requires @shape: shape.block_dim == (1024, 1, 1), ...`. A kernel whose
/// blocks wait for each other says `cooperatively` after its name: a grid of several blocks is
/// launched with all its blocks resident at once, or not at all (the driver's error when the
/// grid cannot fit).
macro_rules! launchers {
    ($(
        $(#[$meta:meta])*
        fn $name:ident $([$($generics:tt)*])? (
            $($param:ident : $pass:ident $ty:ty),* $(,)?
        )
        from $source:ident as $kernel:expr $(, $cooperatively:ident)?
        $(; requires $(@ $shape:ident :)? $($check:expr),+)?
        ;
    )*) => {$(
        $(#[$meta])*
        #[allow(clippy::too_many_arguments)]
        pub(crate) fn $name $(<$($generics)*>)? (
            dev: &$crate::device::cuda::CudaDevice,
            shape: cudarc::driver::LaunchConfig,
            $($param: $ty),*
        ) -> $crate::error::Result<()> {
            use cudarc::driver::PushKernelArg as _;
            let kernel: &str = &$kernel;
            $($(let $shape = &shape;)?)?
            $($(
                if !($check) {
                    return Err($crate::error::Error::Cuda {
                        context: format!("launching {kernel}"),
                        message: format!(
                            "the arguments break its precondition `{}`",
                            stringify!($check)
                        ),
                    });
                }
            )+)?
            let function = dev.function(&$source, kernel)?;
            let mut launch = dev.stream().launch_builder(&function);
            $(launchers!(@push launch $pass $param);)*
            // SAFETY: the arguments are the kernel's parameters in its order, each of the
            // type the kernel declares (device memory by pointer, scalars by value), as the
            // declaration above lists them; the kernel touches only the memory the sizes
            // passed with it describe, and the `requires` conditions (checked above) tie
            // those sizes to the buffers' lengths.
            unsafe { launchers!(@launch launch shape $($cooperatively)?) }
                .map(|_| ())
                .map_err(|e| $crate::device::cuda::driver_error(&format!("launching {kernel}"), e))
        }
    )*};
    (@launch $launch:ident $shape:ident) => {
        $launch.launch($shape)
    };
    (@launch $launch:ident $shape:ident cooperatively) => {
        // One block is resident by itself: the plain launch costs less.
        if $shape.grid_dim == (1, 1, 1) {
            $launch.launch($shape)
        } else {
            $launch.launch_cooperative($shape)
        }
    };
    (@push $launch:ident dev $param:ident) => {
        $launch.arg($param);
    };
    (@push $launch:ident val $param:ident) => {
        $launch.arg(&$param);
    };
}

/// Declares `#[repr(C)]` structs that the kernels share with the host (state words, sums,
/// counts) and makes them device data: each field must be an integer or a float (checked at
/// compile time), and the struct's size is checked against the kernel struct's, given in
/// brackets after the name.
///
/// ```text
/// device_state! {
///     /// A NaN census.
///     #[derive(Clone, Copy, Debug, Default)]
///     pub(crate) struct NanCount[16] {
///         /// NaNs seen.
///         pub count: u64,
///         /// The first one's index.
///         pub first: u64,
///     }
/// }
/// ```
macro_rules! device_state {
    ($(
        $(#[$meta:meta])*
        pub(crate) struct $name:ident[$size:expr] {
            $($(#[$field_meta:meta])* pub $field:ident: $field_type:ty),* $(,)?
        }
    )*) => {$(
        $(#[$meta])*
        #[repr(C)]
        pub(crate) struct $name {
            $($(#[$field_meta])* pub $field: $field_type,)*
        }

        const _: () = {
            assert!(std::mem::size_of::<$name>() == $size);
            const fn plain<T: $crate::device::cuda::kernels::launcher::PlainField>() {}
            $(plain::<$field_type>();)*
        };

        // SAFETY: `#[repr(C)]` with fields of integers and floats only (checked above), laid out
        // as the kernels' struct (its size checked above): plain data the device may copy.
        unsafe impl cudarc::driver::DeviceRepr for $name {}
        // SAFETY: integers and floats, for which zero bits are valid values.
        unsafe impl cudarc::driver::ValidAsZeroBits for $name {}
    )*};
}

/// The field types [`device_state!`] accepts: integers and floats, plain data of any bits.
pub(crate) trait PlainField {}

impl PlainField for u8 {}
impl PlainField for u16 {}
impl PlainField for u32 {}
impl PlainField for u64 {}
impl PlainField for i32 {}
impl PlainField for i64 {}
impl PlainField for f32 {}
impl PlainField for f64 {}

/// Device memory (`Some`) or a null pointer (`None`), for kernel parameters that may be null.
pub(crate) struct OrNull<P>(pub Option<P>);

impl<V> OrNull<&CudaSlice<V>> {
    /// The elements of the memory given; `None` for a null pointer.
    pub(crate) fn given_len(&self) -> Option<usize> {
        self.0.map(|s| s.len())
    }
}

impl<V> OrNull<&mut CudaSlice<V>> {
    /// The elements of the memory given; `None` for a null pointer.
    pub(crate) fn given_len(&self) -> Option<usize> {
        self.0.as_ref().map(|s| s.len())
    }
}

// SAFETY: `Some` pushes what the wrapped argument's own implementation pushes (its pointer,
// with the synchronisation of its reads and writes); `None` pushes a zero word of a pointer's
// size ([`NULL`]), the null pointer, which every kernel taking such a parameter tests before
// use.
unsafe impl<'a, P> PushKernelArg<OrNull<P>> for LaunchArgs<'a>
where
    LaunchArgs<'a>: PushKernelArg<P>,
{
    fn arg(&mut self, arg: OrNull<P>) -> &mut Self {
        match arg.0 {
            Some(memory) => <Self as PushKernelArg<P>>::arg(self, memory),
            None => <Self as PushKernelArg<&'a NullPtr>>::arg(self, &NULL),
        }
    }
}

/// The `u64` words of `words` seen as twice as many `u32` words, the low half of each word first
/// (CUDA devices are little-endian): for a kernel's `u32` flag kept among `u64` words the host
/// reads with one copy.
pub(crate) fn as_u32_words<'b>(words: &'b mut CudaViewMut<'_, u64>) -> CudaViewMut<'b, u32> {
    let len = 2 * words.len();
    // SAFETY: `u32` and `u64` are plain integers, every bit pattern a valid value of either;
    // `u32`'s alignment divides `u64`'s, and `len` `u32` words are exactly the view's bytes.
    unsafe { words.transmute_mut::<u32>(len) }.expect("two u32 words fill each u64 word")
}

/// A null device pointer, passed where a kernel takes an optional buffer and tests the pointer
/// (the buffer is left out). Its only value is [`NULL`]. (Launchers whose kernel may get the
/// buffer or not take an [`OrNull`] instead.)
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NullPtr(u64);

/// The null device pointer.
pub(crate) const NULL: NullPtr = NullPtr(0);

// SAFETY: `NullPtr` is a `u64` of zero bits (its field is private and [`NULL`] its only value):
// passed by value, the kernel receives the null pointer.
unsafe impl DeviceRepr for NullPtr {}
