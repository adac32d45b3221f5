! Fortran bindings (ISO_C_BINDING) for fzpack's PERNIX C ABI: dispatcher creation/destruction,
! the scale helpers and the f32/f64 compress/decompress entry points.
module pernix
  use, intrinsic :: iso_c_binding
  implicit none
  private :: c_int, c_ptr, c_float, c_double, c_int8_t, c_int32_t, c_bool

  integer(c_int), parameter, public :: PERNIX_STATUS_OK = 0
  integer(c_int), parameter, public :: PERNIX_STATUS_INVALID_ARGUMENT = -1
  integer(c_int), parameter, public :: PERNIX_STATUS_UNSUPPORTED_BIT_WIDTH = -2
  integer(c_int), parameter, public :: PERNIX_STATUS_UNSUPPORTED_BACKEND = -3
  integer(c_int), parameter, public :: PERNIX_STATUS_UNSUPPORTED_BLOCK_SIZE = -4
  integer(c_int), parameter, public :: PERNIX_STATUS_UNSUPPORTED_IMPLEMENTATION = -5
  integer(c_int), parameter, public :: PERNIX_STATUS_OUT_OF_MEMORY = -6

  integer(c_int), parameter, public :: PERNIX_BACKEND_AUTO = 0
  integer(c_int), parameter, public :: PERNIX_BACKEND_FALLBACK = 1
  integer(c_int), parameter, public :: PERNIX_BACKEND_X86_AVX2 = 2
  integer(c_int), parameter, public :: PERNIX_BACKEND_X86_BMI2 = 3
  integer(c_int), parameter, public :: PERNIX_BACKEND_X86_AVX512_VBMI = 4
  integer(c_int), parameter, public :: PERNIX_BACKEND_ARM64_NEON = 5
  integer(c_int), parameter, public :: PERNIX_BACKEND_ARM64_SVE = 6
  integer(c_int), parameter, public :: PERNIX_BACKEND_FALLBACK_STDPAR = 7

  interface
    function pernix_dispatcher_create(backend, dispatcher) bind(C, name="pernix_dispatcher_create") result(status)
      import :: c_int, c_ptr
      integer(c_int), value :: backend
      type(c_ptr), intent(out) :: dispatcher
      integer(c_int) :: status
    end function

    subroutine pernix_dispatcher_destroy(dispatcher) bind(C, name="pernix_dispatcher_destroy")
      import :: c_ptr
      type(c_ptr), value :: dispatcher
    end subroutine

    function pernix_scale_f32(bmax, bit_width, scale) bind(C, name="pernix_scale_f32") result(status)
      import :: c_int, c_float, c_int8_t
      real(c_float), value :: bmax
      integer(c_int8_t), value :: bit_width
      real(c_float), intent(out) :: scale
      integer(c_int) :: status
    end function

    function pernix_scale_f64(bmax, bit_width, scale) bind(C, name="pernix_scale_f64") result(status)
      import :: c_int, c_double, c_int8_t
      real(c_double), value :: bmax
      integer(c_int8_t), value :: bit_width
      real(c_double), intent(out) :: scale
      integer(c_int) :: status
    end function

    function pernix_inverse_scale_f32(scale, inverse_scale) bind(C, name="pernix_inverse_scale_f32") result(status)
      import :: c_int, c_float
      real(c_float), value :: scale
      real(c_float), intent(out) :: inverse_scale
      integer(c_int) :: status
    end function

    function pernix_inverse_scale_f64(scale, inverse_scale) bind(C, name="pernix_inverse_scale_f64") result(status)
      import :: c_int, c_double
      real(c_double), value :: scale
      real(c_double), intent(out) :: inverse_scale
      integer(c_int) :: status
    end function

    function pernix_compress_block_f32(dispatcher, bit_width, block_size, input, inverse_scale, output) &
        bind(C, name="pernix_compress_block_f32") result(status)
      import :: c_int, c_ptr, c_float, c_int8_t, c_int32_t
      type(c_ptr), value :: dispatcher
      integer(c_int8_t), value :: bit_width
      integer(c_int32_t), value :: block_size
      real(c_float), intent(in) :: input(*)
      real(c_float), value :: inverse_scale
      integer(c_int8_t), intent(out) :: output(*)
      integer(c_int) :: status
    end function

    function pernix_compress_blocks_f32(dispatcher, bit_width, block_size, input, inverse_scale, output, blocks) &
        bind(C, name="pernix_compress_blocks_f32") result(status)
      import :: c_int, c_ptr, c_float, c_int8_t, c_int32_t
      type(c_ptr), value :: dispatcher
      integer(c_int8_t), value :: bit_width
      integer(c_int32_t), value :: block_size
      real(c_float), intent(in) :: input(*)
      real(c_float), value :: inverse_scale
      integer(c_int8_t), intent(out) :: output(*)
      integer(c_int32_t), value :: blocks
      integer(c_int) :: status
    end function

    function pernix_decompress_block_f32(dispatcher, bit_width, block_size, input, scale, output, sign_values) &
        bind(C, name="pernix_decompress_block_f32") result(status)
      import :: c_int, c_ptr, c_float, c_int8_t, c_int32_t, c_bool
      type(c_ptr), value :: dispatcher
      integer(c_int8_t), value :: bit_width
      integer(c_int32_t), value :: block_size
      integer(c_int8_t), intent(in) :: input(*)
      real(c_float), value :: scale
      real(c_float), intent(out) :: output(*)
      logical(c_bool), value :: sign_values
      integer(c_int) :: status
    end function

    function pernix_decompress_blocks_f32(dispatcher, bit_width, block_size, input, scale, output, blocks, sign_values) &
        bind(C, name="pernix_decompress_blocks_f32") result(status)
      import :: c_int, c_ptr, c_float, c_int8_t, c_int32_t, c_bool
      type(c_ptr), value :: dispatcher
      integer(c_int8_t), value :: bit_width
      integer(c_int32_t), value :: block_size
      integer(c_int8_t), intent(in) :: input(*)
      real(c_float), value :: scale
      real(c_float), intent(out) :: output(*)
      integer(c_int32_t), value :: blocks
      logical(c_bool), value :: sign_values
      integer(c_int) :: status
    end function

    function pernix_compress_block_f64(dispatcher, bit_width, block_size, input, inverse_scale, output) &
        bind(C, name="pernix_compress_block_f64") result(status)
      import :: c_int, c_ptr, c_double, c_int8_t, c_int32_t
      type(c_ptr), value :: dispatcher
      integer(c_int8_t), value :: bit_width
      integer(c_int32_t), value :: block_size
      real(c_double), intent(in) :: input(*)
      real(c_double), value :: inverse_scale
      integer(c_int8_t), intent(out) :: output(*)
      integer(c_int) :: status
    end function

    function pernix_compress_blocks_f64(dispatcher, bit_width, block_size, input, inverse_scale, output, blocks) &
        bind(C, name="pernix_compress_blocks_f64") result(status)
      import :: c_int, c_ptr, c_double, c_int8_t, c_int32_t
      type(c_ptr), value :: dispatcher
      integer(c_int8_t), value :: bit_width
      integer(c_int32_t), value :: block_size
      real(c_double), intent(in) :: input(*)
      real(c_double), value :: inverse_scale
      integer(c_int8_t), intent(out) :: output(*)
      integer(c_int32_t), value :: blocks
      integer(c_int) :: status
    end function

    function pernix_decompress_block_f64(dispatcher, bit_width, block_size, input, scale, output, sign_values) &
        bind(C, name="pernix_decompress_block_f64") result(status)
      import :: c_int, c_ptr, c_double, c_int8_t, c_int32_t, c_bool
      type(c_ptr), value :: dispatcher
      integer(c_int8_t), value :: bit_width
      integer(c_int32_t), value :: block_size
      integer(c_int8_t), intent(in) :: input(*)
      real(c_double), value :: scale
      real(c_double), intent(out) :: output(*)
      logical(c_bool), value :: sign_values
      integer(c_int) :: status
    end function

    function pernix_decompress_blocks_f64(dispatcher, bit_width, block_size, input, scale, output, blocks, sign_values) &
        bind(C, name="pernix_decompress_blocks_f64") result(status)
      import :: c_int, c_ptr, c_double, c_int8_t, c_int32_t, c_bool
      type(c_ptr), value :: dispatcher
      integer(c_int8_t), value :: bit_width
      integer(c_int32_t), value :: block_size
      integer(c_int8_t), intent(in) :: input(*)
      real(c_double), value :: scale
      real(c_double), intent(out) :: output(*)
      integer(c_int32_t), value :: blocks
      logical(c_bool), value :: sign_values
      integer(c_int) :: status
    end function
  end interface
end module pernix
