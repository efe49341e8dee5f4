"""A DCGAN in the pattern of pytorch/examples' dcgan (a generator of transposed convolutions,
batch norm and ReLU ending in tanh; a discriminator of strided convolutions and LeakyReLU
ending in a sigmoid; BCELoss; Adam with beta1 0.5; DCGAN's N(0, 0.02) weights), scaled down to
16 x 16 images of a bright square.  The same training steps run on the CPU from the same
weights and noise: every loss, and the generator's images after training, must match."""

from __future__ import annotations

import copy

import torch
from torch import nn

device = torch.accelerator.current_accelerator()
NZ, NGF, NDF, BATCH, STEPS = 16, 8, 8, 16, 8


class Generator(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(NZ, NGF * 4, 4, 1, 0, bias=False),
            nn.BatchNorm2d(NGF * 4),
            nn.ReLU(True),
            nn.ConvTranspose2d(NGF * 4, NGF * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(NGF * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(NGF * 2, 1, 4, 2, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(1, NDF, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(NDF, NDF * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(NDF * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(NDF * 2, 1, 4, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.main(x).view(-1)


def weights_init(m: nn.Module) -> None:
    """DCGAN's initialisation: N(0, 0.02) convolutions, N(1, 0.02) batch-norm scales."""
    if isinstance(m, nn.Conv2d | nn.ConvTranspose2d):
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.zeros_(m.bias)


def real_images(generator: torch.Generator) -> torch.Tensor:
    """A bright 5 x 5 square somewhere on a dark 16 x 16 field, in [-1, 1]."""
    images = torch.full((BATCH, 1, 16, 16), -1.0)
    corners = torch.randint(0, 12, (BATCH, 2), generator=generator)
    for i, (r, c) in enumerate(corners.tolist()):
        images[i, 0, r : r + 5, c : c + 5] = 1.0
    return images


def train(
    net_g: nn.Module,
    net_d: nn.Module,
    data: list[torch.Tensor],
    noise: list[torch.Tensor],
    where: torch.device | str,
) -> tuple[torch.Tensor, torch.Tensor]:
    """pytorch/examples' loop: D on real then fake, G against D's verdict; the losses of every
    step and the generator's images of a fixed noise after training."""
    net_g, net_d = net_g.to(where), net_d.to(where)
    criterion = nn.BCELoss()
    opt_d = torch.optim.Adam(net_d.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_g = torch.optim.Adam(net_g.parameters(), lr=2e-4, betas=(0.5, 0.999))
    losses = []
    for real, z in zip(data, noise, strict=True):
        real, z = real.to(where), z.to(where)
        net_d.zero_grad()
        label = torch.full((BATCH,), 1.0, device=where)
        err_d_real = criterion(net_d(real), label)
        err_d_real.backward()
        fake = net_g(z)
        label.fill_(0.0)
        err_d_fake = criterion(net_d(fake.detach()), label)
        err_d_fake.backward()
        opt_d.step()
        net_g.zero_grad()
        label.fill_(1.0)
        err_g = criterion(net_d(fake), label)
        err_g.backward()
        opt_g.step()
        losses.append(torch.stack([err_d_real + err_d_fake, err_g]).detach().cpu())
    with torch.no_grad():
        images = net_g.eval()(noise[0].to(where)).cpu()
    return torch.stack(losses), images


if __name__ == "__main__":
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(0)
    net_g, net_d = Generator(), Discriminator()
    net_g.apply(weights_init)
    net_d.apply(weights_init)
    data = [real_images(generator) for _ in range(STEPS)]
    noise = [torch.randn(BATCH, NZ, 1, 1, generator=generator) for _ in range(STEPS)]
    cpu_losses, cpu_images = train(copy.deepcopy(net_g), copy.deepcopy(net_d), data, noise, "cpu")
    losses, images = train(net_g, net_d, data, noise, device)
    torch.testing.assert_close(losses, cpu_losses, rtol=1e-3, atol=1e-4)
    torch.testing.assert_close(images, cpu_images, rtol=1e-3, atol=1e-4)
    assert images.abs().max() < 1.0 and torch.isfinite(losses).all(), losses
    d, g = losses[:, 0], losses[:, 1]
    summary = f"D loss {d[0]:.3f} -> {d[-1]:.3f}, G {g[0]:.3f} -> {g[-1]:.3f}"
    print(f"dcgan: ok on {device} ({summary}; the CPU's within 1e-3)")
