"""DLPack (``tf.experimental.dlpack``): tensors to and from other libraries, no copy.

Every :class:`xdev.Tensor` implements ``__dlpack__`` (DLPack 1.x capsules,
``dltensor_versioned``, flagged read-only; the legacy ``dltensor`` capsule for
consumers that ask for ``max_version`` below 1.0) and ``__dlpack_device__``, so
``numpy.from_dlpack(t)`` and ``torch.from_dlpack(t)`` share its memory.
"""

from . import _xdev

_HOST_TYPES = (1, 3, 11)  # kDLCPU, kDLCUDAHost, kDLROCMHost
_MAX_VERSION = (1, 1)


def _is_capsule(obj):
    return type(obj).__name__ == "PyCapsule"


def from_dlpack(x, /, *, copy=None):
    """A tensor over the memory of ``x`` (anything with ``__dlpack__``, or a DLPack capsule).

    No copy when an xdev device can address that memory (NumPy arrays on the CPU;
    torch/CuPy arrays on a CUDA device of the cuda plugin, the producer then ordering its
    pending work before that device's stream: DLPack's ``stream`` argument); otherwise host
    memory is copied onto the device placement picks, and device memory nobody here can
    read is first copied to the host by its producer, if it can, else
    :class:`xdev.errors.NotFoundError` names its DLPack device. Never silently wrong:
    memory is shared or copied, and dtypes xdev lacks are refused. ``copy=True`` always
    copies.
    """
    if isinstance(x, _xdev.Tensor):
        return x.copy_to(x.device) if copy else x
    if _is_capsule(x):
        return _xdev._from_capsule(x)
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} does not implement __dlpack__")
    device = tuple(int(v) for v in x.__dlpack_device__())
    target = _xdev.dlpack_zero_copy_device(device)
    kwargs = {"max_version": _MAX_VERSION}
    if copy:
        kwargs["copy"] = True
    stream = None
    if target is not None and device[0] not in _HOST_TYPES:
        # Device memory in place: the producer orders its pending work before
        # our stream's (DLPack's stream negotiation). Without a handle for that
        # stream, in place would race the producer: take a host copy instead.
        stream = _xdev.dlpack_stream(target)
        if stream is None:
            target = None
        else:
            kwargs["stream"] = stream
    if target is None and device[0] not in _HOST_TYPES:
        # Memory no xdev device may use in place: ask the producer for a host copy.
        try:
            return _xdev._from_capsule(
                x.__dlpack__(max_version=_MAX_VERSION, dl_device=(1, 0), copy=True))
        except (TypeError, BufferError, NotImplementedError, ValueError) as e:
            if _xdev.dlpack_zero_copy_device(device) is not None:
                raise _xdev.UnimplementedError(
                    f"from_dlpack: memory on DLPack device {device} could be used in place, "
                    "but its plugin offers no stream handle to order the producer's work "
                    "(ABI 1.3 stream_native_handle), and the producer gave no host copy") from e
            # Else the capsule of its own device, which from_dlpack refuses naming it.
    try:
        capsule = x.__dlpack__(**kwargs)
        producer_copied = bool(copy)
    except TypeError:
        # A producer older than DLPack 1.0's keywords.
        capsule = x.__dlpack__() if stream is None else x.__dlpack__(stream=stream)
        producer_copied = False
    result = _xdev._from_capsule(capsule)
    if copy and not producer_copied:
        result = result.copy_to(result.device)
    return result


def to_dlpack(tensor):
    """A DLPack 1.x capsule of ``tensor`` (for consumers that take capsules)."""
    return tensor.__dlpack__(max_version=_MAX_VERSION)


__all__ = ["from_dlpack", "to_dlpack"]
