#!/usr/bin/env python3
"""filter-dataloader.py FOLDER: keeps only well-exposed images from a PyTorch
DataLoader's batches, judged on the GPU: each image of a batch, already a
CUDA tensor, goes to lumahist.stats in place (no copy to the host), and the
images whose median luma is within [0.2, 0.8] and whose P95 - P5 is at
least 0.25 (normalized) go on to training.

Needs PyTorch and torchvision with CUDA; without a device it runs the same
on the CPU.
"""
import os
import sys

import torch
import torchvision
from torch.utils.data import DataLoader, Dataset

import lumahist


class Images(Dataset):
    def __init__(self, folder):
        self.paths = sorted(os.path.join(folder, name) for name in os.listdir(folder)
                            if name.lower().endswith((".png", ".jpg", ".jpeg")))

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        image = torchvision.io.read_image(self.paths[i], torchvision.io.ImageReadMode.RGB)
        # 256 x 256 H x W x 3 uint8, the layout lumahist reads (RGB, interleaved).
        image = torchvision.transforms.functional.resize(image, [256, 256], antialias=True)
        return image.permute(1, 2, 0).contiguous(), self.paths[i]


def well_exposed(image):
    s = lumahist.stats(image, percentiles=(5, 50, 95))
    return 0.2 <= s.median_norm <= 0.8 and s.percentiles_norm[95] - s.percentiles_norm[5] >= 0.25


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    device = "cuda" if torch.cuda.is_available() else "cpu"
    loader = DataLoader(Images(sys.argv[1]), batch_size=4)
    kept = dropped = 0
    for batch, paths in loader:
        batch = batch.to(device, non_blocking=True)
        keep = [well_exposed(image) for image in batch]
        for path, ok in zip(paths, keep):
            print(f"{'keep' if ok else 'drop'} {path}")
        kept += sum(keep)
        dropped += len(keep) - sum(keep)
        good = batch[torch.tensor(keep, device=device)]  # what training would take
        assert good.shape[0] == sum(keep)
    print(f"{kept} kept, {dropped} dropped ({device})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
